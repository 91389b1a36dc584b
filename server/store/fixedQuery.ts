import type { Compilable, CompiledQuery, Insertable, QueryResult, RootOperationNode } from "kysely";
import type { CompiledShapes } from "./drivers.js";
import type { Database, Db } from "./schema.js";

/** Stands for an argument while a query's shape is compiled. */
class Slot {
  constructor(readonly index: number) {}
}

interface Template {
  /** The query's tree, kept with its SQL: the store's driver reads from it what a run writes (writes.ts). */
  query: RootOperationNode;
  queryId: CompiledQuery["queryId"];
  sql: string;
  /** Per parameter: the argument it takes, or -1 for a value fixed in the shape. */
  from: number[];
  fixed: readonly unknown[];
}

/**
 * A statement whose shape never changes, written with Kysely as usual (its SQL and types are checked the
 * same way), but built and compiled once per store: a run only binds its arguments. For the statements of
 * every checkout, where building and compiling the query costs more than running it. A run goes to the
 * store's driver like any query, its tree with it, so its writes are heard as a builder query's are.
 *
 * `build` is called once per store with stand-ins for the arguments, so it must use each argument as
 * a plain value (never branch on it, spread it, or pass an array for `in`); compiling checks that each
 * argument became a parameter.
 */
export function fixedQuery<A extends unknown[], R>(
  build: (db: Db, ...args: A) => Compilable<R>,
): FixedQuery<A, R> {
  // The key of this statement's template among the store's compiled shapes.
  const shape = {};
  const compiled = (db: Db, ...args: A): CompiledQuery<R> => {
    const template = templateOf(db, shape, () => compileShape(db, build, args.length));
    const { from, fixed } = template;
    return {
      query: template.query,
      queryId: template.queryId,
      sql: template.sql,
      parameters: from.map((arg, i) => (arg < 0 ? fixed[i] : args[arg])),
    };
  };
  const run = async (db: Db, ...args: A) => db.executeQuery<R>(compiled(db, ...args));
  return Object.assign(run, { compiled });
}

/** A fixedQuery: run with the store's `db` (or a transaction) and its arguments. */
export interface FixedQuery<A extends unknown[], R> {
  (db: Db, ...args: A): Promise<QueryResult<R>>;
  /** The statement with its arguments bound, not run (to run it another way: runAtCommit). */
  compiled(db: Db, ...args: A): CompiledQuery<R>;
}

/**
 * The template of `shape` for the store `db` belongs to, compiled at its first use there. Templates are
 * kept on the store's dialect adapter (drivers.ts), shared by its transactions and by no other store; a
 * Kysely instance not opened by openStore compiles every time.
 */
function templateOf(db: Db, shape: unknown, compile: () => Template): Template {
  const shapes = (db.getExecutor().adapter as Partial<CompiledShapes>).compiledShapes;
  if (!shapes) return compile();
  let template = shapes.get(shape) as Template | undefined;
  if (!template) {
    template = compile();
    shapes.set(shape, template);
  }
  return template;
}

function compileShape<A extends unknown[], R>(
  db: Db,
  build: (db: Db, ...args: A) => Compilable<R>,
  arity: number,
): Template {
  const slots = Array.from({ length: arity }, (_, i) => new Slot(i));
  const compiled = build(db, ...(slots as unknown as A)).compile();
  const from = compiled.parameters.map((p) => (p instanceof Slot ? p.index : -1));
  for (let i = 0; i < arity; i++) {
    const uses = from.filter((arg) => arg === i).length;
    if (uses === 0) throw new Error(`fixedQuery: argument ${i} is not a parameter of the query`);
  }
  return {
    query: compiled.query,
    queryId: compiled.queryId,
    sql: compiled.sql,
    from,
    fixed: compiled.parameters,
  };
}

type Insert = (db: Db, ...values: unknown[]) => Promise<QueryResult<unknown>>;

/**
 * Inserts one row as a fixedQuery: one shape per table and set of columns (a row's defined keys, in
 * order), so the rows a piece of code writes share one compiled statement. The insert of each shape is
 * kept among the store's compiled shapes, as fixedQuery's templates are.
 */
export function insertRow<T extends keyof Database & string>(
  db: Db,
  table: T,
  row: Insertable<Database[T]>,
): Promise<QueryResult<unknown>> {
  const values = row as Record<string, unknown>;
  const columns = Object.keys(values).filter((c) => values[c] !== undefined);
  const shape = `insertRow ${table}(${columns.join(",")})`;
  const shapes = (db.getExecutor().adapter as Partial<CompiledShapes>).compiledShapes;
  let insert = shapes?.get(shape) as Insert | undefined;
  if (!insert) {
    insert = fixedQuery((db: Db, ...args: unknown[]) =>
      db.insertInto(table).values(Object.fromEntries(columns.map((c, i) => [c, args[i]])) as never),
    );
    shapes?.set(shape, insert);
  }
  return insert(db, ...columns.map((c) => values[c]));
}
