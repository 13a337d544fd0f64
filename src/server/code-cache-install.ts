import * as path from 'node:path';
import { useCodeCache } from './code-cache';

// Imported by the server's entry point right after the module map, so that the modules its start loads are
// compiled from the build's code cache (code-cache.ts). Only the build (dist/src/server/) has one.
const dist = path.resolve(__dirname, '..', '..');
if (path.basename(dist) === 'dist') useCodeCache(path.dirname(dist));
