import type { OpenAPIObject, ReferenceObject, SchemaObject } from '@nestjs/swagger';

/**
 * `@nestjs/swagger` writes a nullable object property as `{ nullable: true, allOf: [$ref] }`, which
 * under OpenAPI 3.0.3 still refuses `null` (`nullable` needs a `type` beside it). Inline the target
 * instead, so `null` validates, and drop components nothing references any more. A lone
 * `allOf: [$ref]` becomes the `$ref`.
 */
export function inlineNullableReferences(document: OpenAPIObject): void {
  const schemas = document.components?.schemas ?? {};
  const inline = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(inline);
    if (!node || typeof node !== 'object') return;
    const schema = node as SchemaObject;
    const ref = schema.allOf?.length === 1 ? (schema.allOf[0] as ReferenceObject).$ref : undefined;
    const target = ref?.startsWith('#/components/schemas/') ? schemas[ref.slice(21)] : undefined;
    if (ref && Object.keys(schema).length === 1) {
      // A lone `allOf: [$ref]` is the reference itself.
      delete schema.allOf;
      Object.assign(schema, { $ref: ref });
    } else if (schema.nullable === true && target && !('$ref' in target)) {
      delete schema.allOf;
      Object.assign(
        schema,
        structuredClone(target),
        { nullable: true },
        schema.description ? { description: schema.description } : {},
      );
    }
    Object.values(node).forEach(inline);
  };
  inline(document.components);
  inline(document.paths);
  const used = JSON.stringify({ paths: document.paths, components: { ...document.components, schemas: undefined } });
  let changed = true;
  while (changed) {
    changed = false;
    const text = used + JSON.stringify(schemas);
    for (const name of Object.keys(schemas)) {
      if (name !== 'ErrorBody' && !text.includes(`"#/components/schemas/${name}"`)) {
        delete schemas[name];
        changed = true;
      }
    }
  }
}
