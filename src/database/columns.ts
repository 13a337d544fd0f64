import { Column, ColumnOptions, PrimaryGeneratedColumn, ValueTransformer } from 'typeorm';

/**
 * Column helpers that keep entities portable between SQLite and MySQL (house style: integers, varchar/text,
 * booleans, unix-second timestamps). 64-bit columns are declared `bigint`; on SQLite the data source maps them
 * to `integer` (also 64-bit there), because SQLite allows AUTOINCREMENT only on an INTEGER PRIMARY KEY.
 */

/** mysql2 returns BIGINT as a string; ids and times must reach JSON as numbers on both databases. */
export const bigintAsNumber: ValueTransformer = {
  to: (value: unknown) => value,
  from: (value: unknown) => (value === null || value === undefined ? value : Number(value)),
};

export function IdColumn(): PropertyDecorator {
  // mysql2 is configured (supportBigNumbers, bigNumberStrings off) to return safe 64-bit integers as numbers.
  return PrimaryGeneratedColumn({ type: 'bigint' });
}

/** A reference to another row's id (64-bit). */
export function RefColumn(options: ColumnOptions = {}): PropertyDecorator {
  return Column({ type: 'bigint', transformer: bigintAsNumber, ...options });
}

/** Seconds since the epoch, UTC. 0 means "never". */
export function UnixTimeColumn(options: ColumnOptions = {}): PropertyDecorator {
  return Column({ type: 'bigint', transformer: bigintAsNumber, default: 0, ...options });
}

export function CounterColumn(options: ColumnOptions = {}): PropertyDecorator {
  return Column({ type: 'integer', default: 0, ...options });
}

export function FlagColumn(defaultValue = false, options: ColumnOptions = {}): PropertyDecorator {
  return Column({ type: 'boolean', default: defaultValue, ...options });
}

export function TextColumn(length: number, options: ColumnOptions = {}): PropertyDecorator {
  return Column({ type: 'varchar', length, default: '', ...options });
}

export function LongTextColumn(options: ColumnOptions = {}): PropertyDecorator {
  return Column({ type: 'text', ...options });
}

/**
 * Text of up to 16 MiB on MySQL (`mediumtext`; `text` there stops at 64 KiB); SQLite's `text` has no such bound,
 * and the data source spells it `text` there. For documents users write at length (issue bodies, comments) and
 * what carries them (webhook payloads).
 */
export function MediumTextColumn(options: ColumnOptions = {}): PropertyDecorator {
  return Column({ type: 'mediumtext', ...options });
}
