import { ArgumentMetadata, Injectable, PipeTransform } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { InvalidInputError } from '../common/errors';
import { fieldSpecs, FieldType } from '../common/fields';
import { DecodedBody } from './body-decoding';
import type { LazyBody } from './body-guard';

// Why: a decoded body becomes a typed, validated option object, with Forgejo's 422 message for the first failure.

/** Form fields arrive as strings: give each the type its field declares. */
function coerceForm(target: Function, fields: Record<string, unknown>): Record<string, unknown> {
  const specs = fieldSpecs(target);
  const value: Record<string, unknown> = {};
  for (const [key, values] of Object.entries(fields)) {
    const list = values as string[];
    value[key] = coerce(specs.get(key)?.type ?? 'string', list);
  }
  return value;
}

function coerce(type: FieldType, values: string[]): unknown {
  const last = values[values.length - 1];
  switch (type) {
    case 'boolean':
      return ['true', '1', 'on', 'yes'].includes(last.toLowerCase()) ? true : ['false', '0', 'off', 'no', ''].includes(last.toLowerCase()) ? false : last;
    case 'integer':
      return /^-?\d+$/.test(last) ? Number(last) : last;
    case 'strings':
      return values
        .flatMap((item) => item.split(','))
        .map((item) => item.trim())
        .filter((item) => item !== '');
    case 'array':
      return values
        .flatMap((item) => item.split(','))
        .map((item) => item.trim())
        .filter((item) => item !== '')
        .map((item) => (/^\d+$/.test(item) ? Number(item) : item));
    case 'integers': {
      const items = values
        .flatMap((item) => item.split(','))
        .map((item) => item.trim())
        .filter((item) => item !== '');
      return items.map((item) => (/^-?\d+$/.test(item) ? Number(item) : item));
    }
    default:
      return last;
  }
}

/**
 * Binds `@Body() option: SomeOption`: raises the kept decoding error, then validates the option class's
 * fields and reports the first failure as a 422.
 */
@Injectable()
export class BodyPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type !== 'body' || !(value instanceof DecodedBody)) return value;
    if (value.error) throw value.error;
    const target = metadata.metatype;
    if (!target || target === Object) return value.value;
    return validateOption(target, value.fromForm ? coerceForm(target, value.value) : value.value);
  }
}

/** Builds an option object from plain data and applies its field rules; the first failure is a 422. */
export function validateOption<T extends object>(target: new () => T, plain: Record<string, unknown>): T;
export function validateOption(target: Function, plain: Record<string, unknown>): object;
export function validateOption(target: Function, plain: Record<string, unknown>): object {
  const option = plainToInstance(target as new () => object, plain) as object;
  const errors = validateSync(option, { stopAtFirstError: true, forbidUnknownValues: false });
  if (errors.length > 0) {
    const first = errors[0];
    throw new InvalidInputError(Object.values(first.constraints ?? {})[0] ?? `[${first.property}]: invalid`);
  }
  return option;
}

/** What `@Body() option: T` does, run later: reading, decoding errors (400/413/422), then the option's field rules (422). */
export async function bindOption<T extends object>(body: LazyBody, target: new () => T): Promise<T> {
  return new BodyPipe().transform(await body.read(), { type: 'body', metatype: target }) as T;
}
