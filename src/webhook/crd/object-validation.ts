// Checks an object of one of our kinds against the same schema the CRDs carry (schemas.ts), so a request whose object
// does not parse is denied with the field at fault. The apiserver's x-kubernetes list semantics are checked too.

import { Ajv, type AnySchemaObject, type ErrorObject, type SchemaValidateFunction, type ValidateFunction } from 'ajv';
import { SCHEMAS, type CustomKind } from './schemas.ts';

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

function uniqueBy(items: unknown[], key: (item: unknown) => string): boolean {
  return new Set(items.map(key)).size === items.length;
}

// 'set': no duplicate items; 'map': no two items with the same key fields.
const listTypeValid: SchemaValidateFunction = (listType: string, data: unknown[], parent?: AnySchemaObject) => {
  if (listType === 'set') return uniqueBy(data, (x) => JSON.stringify(x));
  if (listType === 'map') {
    const keys = (parent?.['x-kubernetes-list-map-keys'] as string[] | undefined) ?? [];
    return uniqueBy(data, (x) => JSON.stringify(keys.map((k) => (x as Record<string, unknown>)?.[k])));
  }
  return true;
};

function buildAjv(): Ajv {
  const ajv = new Ajv({ allErrors: false, strict: true });
  ajv.addFormat('date-time', RFC3339);
  ajv.addFormat('int32', {
    type: 'number',
    validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31,
  });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
  ajv.addKeyword({ keyword: 'x-kubernetes-preserve-unknown-fields' });
  ajv.addKeyword({ keyword: 'x-kubernetes-list-map-keys' });
  ajv.addKeyword({
    keyword: 'x-kubernetes-list-type',
    type: 'array',
    schemaType: 'string',
    validate: listTypeValid,
    errors: false,
  });
  return ajv;
}

const ajv = buildAjv();
const validators = new Map<CustomKind, ValidateFunction>(
  (Object.keys(SCHEMAS) as CustomKind[]).map((kind) => [kind, ajv.compile(SCHEMAS[kind])]),
);

function describe(error: ErrorObject): string {
  const path =
    error.instancePath
      .split('/')
      .slice(1)
      .map((seg, i) =>
        /^\d+$/.test(seg) ? `[${seg}]` : `${i > 0 ? '.' : ''}${seg.replaceAll('~1', '/').replaceAll('~0', '~')}`,
      )
      .join('') || '(object)';
  if (error.keyword === 'x-kubernetes-list-type') return `${path}: must not contain duplicate entries`;
  if (error.keyword === 'enum')
    return `${path}: must be one of ${(error.params as { allowedValues: string[] }).allowedValues.join(', ')}`;
  return `${path}: ${error.message ?? 'is invalid'}`;
}

/** Undefined when `object` is a valid `kind`; otherwise one sentence naming the field at fault. */
export function customObjectError(kind: CustomKind, object: unknown): string | undefined {
  const validate = validators.get(kind)!;
  if (validate(object)) return undefined;
  return describe(validate.errors![0]!);
}
