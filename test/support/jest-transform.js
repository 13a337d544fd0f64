// The transforms every Jest configuration shares: TypeScript through ts-jest, and the few packages published
// only as ES modules (the OpenID provider, the OpenID client, their JOSE libraries) transpiled to CommonJS,
// since Jest loads modules as CommonJS (Node itself loads them with require).
const ESM_ONLY = ['oidc-provider', 'openid-client', 'oauth4webapi', 'jose'];

module.exports = {
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.jest.json' }],
    [`^.+/node_modules/(${ESM_ONLY.join('|')})/.+\\.js$`]: '<rootDir>/test/support/esm-transform.js',
  },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_ONLY.join('|')})/)`],
};
