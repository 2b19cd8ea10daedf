import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

/** The parts of an OpenAPI 3.0 document that response validation reads. */
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** What the validator needs of a response (a superagent Response satisfies it). */
export interface CheckedResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text?: string;
  body?: unknown;
}

/** A response that disagrees with the document; the message names everything that disagrees. */
export class OpenApiMismatchError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    readonly template: string | undefined,
    readonly status: number,
    readonly problems: string[],
    body: string,
  ) {
    super(
      `OpenAPI mismatch: ${method} ${path}${template && template !== path ? ` (${template})` : ''} -> ${status}\n` +
        problems.map((p) => `  - ${p}`).join('\n') +
        `\n  body: ${body.length > 600 ? `${body.slice(0, 600)}…` : body}`,
    );
    this.name = 'OpenApiMismatchError';
  }
}

const DOC_ID = 'openapi.json';
const OPERATION_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function escapePointer(part: string): string {
  return part.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** OpenAPI 3.0.3: `nullable` adds null only beside `type`; elsewhere it means nothing (ajv would refuse it). */
function dropInertNullable(node: Json): Json {
  if (Array.isArray(node)) return node.map(dropInertNullable);
  if (!isObject(node)) return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'nullable' && typeof value === 'boolean' && !('type' in node)) continue;
    out[key] = dropInertNullable(value);
  }
  return out;
}

interface Located {
  node: JsonObject;
  pointer: string;
}

interface PathMatch {
  template: string;
  item: JsonObject;
}

function mediaType(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  return value?.split(';')[0].trim().toLowerCase() || undefined;
}

function mediaMatches(declared: string, actual: string): boolean {
  const [type, sub] = declared.toLowerCase().split('/');
  const [actualType, actualSub] = actual.split('/');
  return (type === '*' || type === actualType) && (sub === '*' || sub === actualSub);
}

function isJsonMedia(media: string): boolean {
  return media === 'application/json' || /^application\/[^/]+\+json$/.test(media);
}

function formatErrors(errors: ErrorObject[] | null | undefined, prefix: string): string[] {
  return (errors ?? []).map(
    (e) => `${prefix}${e.instancePath || '/'}: ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`,
  );
}

/** Parses a header value by its schema's type, so `RateLimit-Limit: 60` validates as `type: integer`. */
function coerceHeader(value: string, schema: JsonObject | undefined): Json {
  const type = schema?.type;
  if ((type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(value.trim())) {
    return Number(value);
  }
  if (type === 'boolean' && (value === 'true' || value === 'false')) return value === 'true';
  if (type === 'array') return value.split(',').map((v) => v.trim());
  return value;
}

/**
 * Validates responses against one OpenAPI 3.0 document: the status must be declared for the
 * operation, the body must validate against its schema and the declared headers against theirs.
 */
export class OpenApiValidator {
  private readonly ajv = new Ajv({ allErrors: true, strict: false });
  private readonly doc: JsonObject;
  private readonly templates: { template: string; segments: string[]; item: JsonObject }[];

  constructor(document: unknown) {
    this.doc = dropInertNullable(document as Json) as JsonObject;
    addFormats(this.ajv);
    this.ajv.addSchema(this.doc, DOC_ID);
    const paths = isObject(this.doc.paths) ? this.doc.paths : {};
    this.templates = Object.entries(paths)
      .filter((entry): entry is [string, JsonObject] => isObject(entry[1]))
      .map(([template, item]) => ({ template, segments: template.split('/'), item }));
  }

  /** Follows `$ref`s inside the document, keeping the JSON pointer of where the node lives. */
  private resolve(node: Json | undefined, pointer: string): Located | undefined {
    let current = node;
    let at = pointer;
    for (let hops = 0; isObject(current) && typeof current.$ref === 'string'; hops += 1) {
      const ref = current.$ref;
      if (!ref.startsWith('#/') || hops > 20) return undefined;
      at = ref.slice(1);
      current = ref
        .slice(2)
        .split('/')
        .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
        .reduce<Json | undefined>((n, part) => (isObject(n) ? n[part] : undefined), this.doc);
    }
    return isObject(current) ? { node: current, pointer: at } : undefined;
  }

  private schemaValidator(pointer: string): ValidateFunction | string {
    try {
      const validate = this.ajv.getSchema(`${DOC_ID}#${pointer}`);
      return validate ?? `no schema at ${pointer}`;
    } catch (error) {
      return `schema at ${pointer} does not compile: ${(error as Error).message}`;
    }
  }

  /** Documented path templates that match, most specific first (a literal segment beats `{param}`). */
  matchPath(path: string): PathMatch[] {
    const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    const segments = trimmed.split('/').map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
    const matches = this.templates.filter(
      (t) =>
        t.segments.length === segments.length &&
        t.segments.every((seg, i) => (/^\{[^}]+\}$/.test(seg) ? segments[i] !== '' : seg === segments[i])),
    );
    const rank = (segs: string[]): string => segs.map((s) => (/^\{[^}]+\}$/.test(s) ? '1' : '0')).join('');
    return matches
      .sort((a, b) => rank(a.segments).localeCompare(rank(b.segments)))
      .map((t) => ({ template: t.template, item: t.item }));
  }

  /** The problems of one response, or none; `path` may carry a query string. */
  check(method: string, rawPath: string, res: CheckedResponse): OpenApiMismatchError | undefined {
    const path = rawPath.split('?')[0];
    const verb = method.toLowerCase();
    const lookup = verb === 'head' ? ['head', 'get'] : [verb];
    const matches = this.matchPath(path);
    const problems: string[] = [];
    let template: string | undefined;

    if (matches.length === 0) {
      if (!path.startsWith('/api/v1/')) return undefined;
      template = '(no documented path)';
      if (res.status !== 404 && res.status !== 405) {
        problems.push(`undocumented path answered ${res.status}; only 404 or 405 are expected`);
      }
      const errorBody = this.resolve({ $ref: '#/components/schemas/ErrorBody' }, '');
      if (!errorBody) problems.push('the document has no #/components/schemas/ErrorBody');
      else {
        const content = { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } };
        this.checkBody(verb, res, content, undefined, problems, '/components/schemas/ErrorBody');
      }
      return this.result(method, path, template, res, problems);
    }

    let operation: Located | undefined;
    for (const match of matches) {
      const name = lookup.find((m) => isObject(match.item[m]));
      if (name) {
        operation = {
          node: match.item[name] as JsonObject,
          pointer: `/paths/${escapePointer(match.template)}/${name}`,
        };
        template = match.template;
        break;
      }
    }

    if (!operation) {
      template = matches[0].template;
      if (res.status !== 405) {
        problems.push(`${verb} is not documented on ${template}, so only 405 is expected, got ${res.status}`);
        return this.result(method, path, template, res, problems);
      }
      for (const match of matches) {
        for (const m of OPERATION_METHODS) {
          const op = match.item[m];
          if (isObject(op) && isObject(op.responses) && op.responses['405'] !== undefined) {
            operation = { node: op, pointer: `/paths/${escapePointer(match.template)}/${m}` };
            break;
          }
        }
        if (operation) break;
      }
      if (!operation) {
        problems.push(`405 for an undocumented method, but no operation of ${template} declares a 405 response`);
        return this.result(method, path, template, res, problems);
      }
    }

    const responses = this.resolve(operation.node.responses, `${operation.pointer}/responses`);
    const status = String(res.status);
    const key = responses
      ? [status, `${status[0]}XX`, `${status[0]}xx`, 'default'].find((k) => responses.node[k] !== undefined)
      : undefined;
    if (!responses || !key) {
      const declared = responses ? Object.keys(responses.node).join(', ') : 'none';
      problems.push(`status ${status} is not documented (declared: ${declared})`);
      return this.result(method, path, template, res, problems);
    }
    const response = this.resolve(responses.node[key], `${responses.pointer}/${escapePointer(key)}`);
    if (!response) {
      problems.push(`response ${key} does not resolve`);
      return this.result(method, path, template, res, problems);
    }
    this.checkHeaders(res, response, problems);
    const content = this.resolve(response.node.content, `${response.pointer}/content`);
    this.checkBody(verb, res, content?.node, content?.pointer, problems);
    return this.result(method, path, template, res, problems);
  }

  private checkHeaders(res: CheckedResponse, response: Located, problems: string[]): void {
    const headers = this.resolve(response.node.headers, `${response.pointer}/headers`);
    if (!headers) return;
    for (const name of Object.keys(headers.node)) {
      if (name.toLowerCase() === 'content-type') continue;
      const header = this.resolve(headers.node[name], `${headers.pointer}/${escapePointer(name)}`);
      if (!header) {
        problems.push(`header ${name}: declaration does not resolve`);
        continue;
      }
      const raw = res.headers[name.toLowerCase()];
      const value = Array.isArray(raw) ? raw.join(', ') : raw;
      if (value === undefined) {
        if (header.node.required === true) problems.push(`header ${name}: required but missing`);
        continue;
      }
      if (header.node.schema === undefined) continue;
      const schema = this.resolve(header.node.schema, `${header.pointer}/schema`);
      const validate = this.schemaValidator(`${header.pointer}/schema`);
      if (typeof validate === 'string') {
        problems.push(`header ${name}: ${validate}`);
      } else if (!validate(coerceHeader(value, schema?.node))) {
        problems.push(...formatErrors(validate.errors, `header ${name} ${JSON.stringify(value)} `));
      }
    }
  }

  private checkBody(
    verb: string,
    res: CheckedResponse,
    content: JsonObject | undefined,
    contentPointer: string | undefined,
    problems: string[],
    schemaPointer?: string,
  ): void {
    if (verb === 'head') return;
    const text = bodyText(res);
    const empty = text === '' || (text === undefined && res.headers['content-length'] === '0');
    const declared = content ? Object.keys(content) : [];
    if (declared.length === 0) {
      if (!empty) problems.push('a body, but the response declares no content');
      return;
    }
    if (empty) {
      problems.push(`an empty body, but the response declares ${declared.join(', ')}`);
      return;
    }
    const media = mediaType(res.headers['content-type']);
    const declaredMedia = media ? declared.find((d) => mediaMatches(d, media)) : undefined;
    if (!media || !declaredMedia || !content) {
      problems.push(`content type ${media ?? '(none)'} is not declared (declared: ${declared.join(', ')})`);
      return;
    }
    const mediaObject = this.resolve(content[declaredMedia], `${contentPointer}/${escapePointer(declaredMedia)}`);
    if (!mediaObject || mediaObject.node.schema === undefined) return;
    if (!isJsonMedia(media)) return;
    let body: unknown;
    try {
      body = text === undefined ? res.body : JSON.parse(text);
    } catch {
      problems.push('the body is not JSON, but the response declares a JSON schema');
      return;
    }
    const validate = this.schemaValidator(schemaPointer ?? `${mediaObject.pointer}/schema`);
    if (typeof validate === 'string') problems.push(`body: ${validate}`);
    else if (!validate(body)) problems.push(...formatErrors(validate.errors, 'body '));
  }

  private result(
    method: string,
    path: string,
    template: string | undefined,
    res: CheckedResponse,
    problems: string[],
  ): OpenApiMismatchError | undefined {
    if (problems.length === 0) return undefined;
    return new OpenApiMismatchError(method.toUpperCase(), path, template, res.status, problems, bodyText(res) ?? '');
  }
}

function bodyText(res: CheckedResponse): string | undefined {
  if (typeof res.text === 'string') return res.text;
  if (Buffer.isBuffer(res.body)) return res.body.toString('utf8');
  return undefined;
}

/** The document a service serves, fetched once on first use; undefined if it serves none (a worker). */
export function documentValidator(url: string): () => Promise<OpenApiValidator | undefined> {
  let pending: Promise<OpenApiValidator | undefined> | undefined;
  return () => {
    pending ??= (async () => {
      const res = await fetch(`${url}/api/docs-json`);
      if (res.status === 404) return undefined;
      if (res.status !== 200) throw new Error(`GET ${url}/api/docs-json answered ${res.status}`);
      return new OpenApiValidator(await res.json());
    })();
    return pending;
  };
}
