// First: the module map answers the requires below (server/module-map.ts).
import '../server/module-map-install';
import 'reflect-metadata';
import { ConfigError, loadConfig } from '../config/config';
import { runCli } from './cli';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    console.error(error instanceof ConfigError ? error.message : error);
    process.exit(1);
  }
  process.exitCode = await runCli(process.argv.slice(2), config, {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  });
}

void main();
