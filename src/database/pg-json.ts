import { types } from 'pg';
import { parseJson } from 'src/common/json';

/**
 * pg parses json and jsonb columns with JSON.parse, process-wide; these parse them with parseJson,
 * correct on the Node.js releases whose JSON.parse misreads one-character escaped keys (common/json.ts).
 * Every pg client of the process (TypeORM's, the raw pool, the listener) shares these parsers; DatabaseModule
 * sets them when it loads.
 */
export function useCorrectJsonParsers(): void {
  types.setTypeParser(types.builtins.JSON, parseJson);
  types.setTypeParser(types.builtins.JSONB, parseJson);
}
