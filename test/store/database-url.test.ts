import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { StartupError } from "../../server/errors.js";
import { openStore } from "../../server/store/database.js";

/** A DATABASE_URL or data folder the store cannot use stops the start with one line, never a stack trace. */

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function scratch(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "almoner-dburl-"));
  dirs.push(dir);
  return dir;
}

async function refusal(url: string): Promise<unknown> {
  return openStore(url).then(
    async (store) => {
      await store.close();
      return null;
    },
    (err: unknown) => err,
  );
}

describe("a database the store cannot open", () => {
  it("a PostgreSQL URL that does not parse is refused without its password", async () => {
    const err = await refusal("postgres://almoner:s3cr/et@127.0.0.1:99999/db");
    expect(err).toBeInstanceOf(StartupError);
    expect((err as Error).message).toContain("Invalid setting DATABASE_URL");
    expect((err as Error).message).not.toContain("s3cr");
  });

  it("a file that is not a SQLite database is named in a StartupError", async () => {
    const file = path.join(scratch(), "almoner.db");
    fs.writeFileSync(file, "not a database, just text ".repeat(200));
    const err = await refusal(file);
    expect(err).toBeInstanceOf(StartupError);
    expect((err as Error).message).toContain(`Cannot open the SQLite database at ${file}`);
  });

  it("a data folder that is a file is named in a StartupError", async () => {
    const notDir = path.join(scratch(), "data");
    fs.writeFileSync(notDir, "");
    const err = await refusal(path.join(notDir, "almoner.db"));
    expect(err).toBeInstanceOf(StartupError);
    expect((err as Error).message).toContain("Cannot open the SQLite database at");
  });
});
