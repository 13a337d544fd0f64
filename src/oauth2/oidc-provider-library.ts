import type Provider from 'oidc-provider';

/**
 * Loads `oidc-provider` (an ES module, loaded with `require` as Node 20.19 and later allow) once, when the
 * provider starts. What the library prints while it loads (its notice that it is tested on Node 22 and later)
 * goes to the application's log, as a warning, instead of standard error.
 */
export function loadOidcProvider(warn: (message: string) => void): typeof Provider {
  const original = console.warn;
  console.warn = (...parts: unknown[]) => warn(parts.map(String).join(' '));
  try {
    return (require('oidc-provider') as { default: typeof Provider }).default;
  } finally {
    console.warn = original;
  }
}
