import { afterEach, beforeEach } from "vitest";
import type { Store } from "../../server/store/database.js";
import { freshDatabase, type TestDatabase } from "./testApp.js";

/**
 * Gives each test of the file a fresh database and its open store (closed and dropped after the test):
 * `use` receives them before each test.
 */
export function freshStoreForEachTest(use: (store: Store, database: TestDatabase) => void): void {
  let database: TestDatabase | undefined;
  let store: Store | undefined;
  beforeEach(async () => {
    database = await freshDatabase();
    store = await database.open();
    use(store, database);
  });
  afterEach(async () => {
    await store?.close();
    await database?.drop();
    store = undefined;
    database = undefined;
  });
}
