import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { ValidateBy } from 'class-validator';

/**
 * One decorator per body field: it documents the field in OpenAPI and validates it with the rules in the
 * order given, reporting the first failure as Forgejo does: `[<Field>]: <Rule>` (docs/api-conventions.md), where
 * <Field> is the Forgejo option-field name, not the JSON key.
 */
export type FieldType = 'string' | 'boolean' | 'integer' | 'strings' | 'integers' | 'array' | 'object';

export interface FieldRule {
  /** The rule name reported in the message, e.g. AlphaDashDot. */
  name: string;
  test(value: unknown): boolean;
}

export interface FieldSpec {
  field: string;
  type: FieldType;
  required?: boolean;
  maxSize?: number;
  minSize?: number;
  in?: readonly string[];
  rules?: FieldRule[];
  description?: string;
  example?: unknown;
  nullable?: boolean;
}

const TYPE_CHECKS: Record<FieldType, (value: unknown) => boolean> = {
  string: (value) => typeof value === 'string',
  boolean: (value) => typeof value === 'boolean',
  integer: (value) => typeof value === 'number' && Number.isInteger(value),
  strings: (value) => Array.isArray(value) && value.every((item) => typeof item === 'string'),
  integers: (value) => Array.isArray(value) && value.every((item) => typeof item === 'number' && Number.isInteger(item)),
  array: (value) => Array.isArray(value),
  object: (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
};

const TYPE_NAMES: Record<FieldType, string> = {
  string: 'a string',
  boolean: 'a boolean',
  integer: 'an integer',
  strings: 'an array of strings',
  integers: 'an array of integers',
  array: 'an array',
  object: 'an object',
};

export function fieldFailure(spec: FieldSpec, value: unknown): string | undefined {
  const fail = (rule: string) => `[${spec.field}]: ${rule}`;
  if (value === undefined || value === null || (spec.type === 'string' && value === '')) {
    return spec.required ? fail('Required') : undefined;
  }
  if (!TYPE_CHECKS[spec.type](value)) return fail(`must be ${TYPE_NAMES[spec.type]}`);
  const size = typeof value === 'string' ? [...value].length : Array.isArray(value) ? value.length : undefined;
  if (spec.maxSize !== undefined && size !== undefined && size > spec.maxSize) return fail('MaxSize');
  if (spec.minSize !== undefined && size !== undefined && size < spec.minSize) return fail('MinSize');
  if (spec.in && !spec.in.includes(String(value))) return fail('In');
  for (const rule of spec.rules ?? []) if (!rule.test(value)) return fail(rule.name);
  return undefined;
}

const FIELD_SPECS = new WeakMap<object, Map<string, FieldSpec>>();

/** The field specs declared on a body class, by property name (used to coerce form-encoded bodies). */
export function fieldSpecs(target: Function): Map<string, FieldSpec> {
  const specs = new Map<string, FieldSpec>();
  for (let proto = target.prototype; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const [key, spec] of FIELD_SPECS.get(proto) ?? []) if (!specs.has(key)) specs.set(key, spec);
  }
  return specs;
}

export function Field(spec: FieldSpec): PropertyDecorator {
  const openApiType = { string: String, boolean: Boolean, integer: Number, strings: [String], integers: [Number], array: [Object], object: Object }[spec.type];
  return applyDecorators(
    (target: object, key: string | symbol) => {
      const specs = FIELD_SPECS.get(target) ?? new Map<string, FieldSpec>();
      specs.set(String(key), spec);
      FIELD_SPECS.set(target, specs);
    },
    ApiProperty({
      type: openApiType as never,
      required: spec.required ?? false,
      maxLength: spec.type === 'string' ? spec.maxSize : undefined,
      enum: spec.in ? [...spec.in] : undefined,
      description: spec.description,
      example: spec.example,
      nullable: spec.nullable,
    } as never),
    ValidateBy({
      name: 'forgejoField',
      validator: {
        validate: (value) => fieldFailure(spec, value) === undefined,
        defaultMessage: (args) => fieldFailure(spec, args?.value) ?? `[${spec.field}]: invalid`,
      },
    }),
  );
}

/** Forgejo's AlphaDashDot: letters, digits, '-', '_' and '.'. */
export const ALPHA_DASH_DOT: FieldRule = { name: 'AlphaDashDot', test: (value) => /^[A-Za-z0-9_.-]+$/.test(String(value)) };

/** An address of the form local@domain, as Forgejo's Email rule accepts. */
export const EMAIL: FieldRule = {
  name: 'Email',
  test: (value) => /^[^\s@"<>,;:\\()[\]]+@[^\s@"<>,;:\\()[\]]+\.[^\s@"<>,;:\\()[\]]+$/.test(String(value)),
};

export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

export const VALID_URL: FieldRule = { name: 'ValidUrl', test: (value) => String(value) === '' || isHttpUrl(String(value)) };
