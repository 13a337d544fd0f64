import * as path from 'node:path';
import { useModuleMap } from './module-map';

// Imported first by the server's and the CLI's entry points, so that their start-up requires are answered from the
// build's module map (module-map.ts). Only the build (dist/src/server/) has one: run from the sources, as the
// tests do, nothing changes.
const dist = path.resolve(__dirname, '..', '..');
if (path.basename(dist) === 'dist') useModuleMap(path.dirname(dist));
