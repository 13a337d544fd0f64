// A Jest transformer for the ES-module-only packages named in jest-transform.js: TypeScript's transpiler
// rewrites their import/export to CommonJS (they use neither top-level await nor import.meta).
const ts = require('typescript');

module.exports = {
  process(source, filename) {
    const output = ts.transpileModule(source, {
      fileName: filename,
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, allowJs: true, esModuleInterop: true, sourceMap: false },
    });
    return { code: output.outputText };
  },
};
