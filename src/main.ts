import { createApp } from './bootstrap';
import { ConfigError, loadConfig } from './config/config';

async function main(): Promise<void> {
  const config = loadConfig();
  const app = await createApp(config);
  await app.listen(config.port);
}

main().catch((error: unknown) => {
  // A bad configuration value names its variable; anything else is a start-up failure worth its stack.
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
