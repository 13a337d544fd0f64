import { AppConfig } from '../config/config';
import { classifyAddress, DisallowedHostError, HostPolicy } from './host-policy';

describe('host policy', () => {
  it.each([
    ['8.8.8.8', 'external'],
    ['2606:4700:4700::1111', 'external'],
    ['127.0.0.1', 'local'],
    ['127.5.6.7', 'local'],
    ['::1', 'local'],
    ['10.1.2.3', 'local'],
    ['172.16.0.1', 'local'],
    ['172.31.255.255', 'local'],
    ['192.168.1.1', 'local'],
    ['fd00::1', 'local'],
    ['::ffff:127.0.0.1', 'local'],
    ['::ffff:10.0.0.1', 'local'],
    ['::ffff:8.8.8.8', 'external'],
    ['64:ff9b::7f00:1', 'local'],
    ['::127.0.0.1', 'local'],
    ['::7f00:1', 'local'],
    ['::10.0.0.1', 'local'],
    ['::169.254.169.254', 'refused'],
    ['::8.8.8.8', 'external'],
    ['::ffff:0:127.0.0.1', 'local'],
    ['::ffff:0:169.254.169.254', 'refused'],
    ['64:ff9b:1:7f00:0:100::', 'local'],
    ['64:ff9b:1:a9fe:a9:fe00::', 'refused'],
    ['2606:4700::5efe:127.0.0.1', 'local'],
    ['2606:4700::200:5efe:169.254.169.254', 'refused'],
    ['2606:4700::5efe:8.8.8.8', 'external'],
    ['fd00::5efe:8.8.8.8', 'local'],
    ['::0.0.0.2', 'refused'],
    ['0.0.0.0', 'refused'],
    ['::', 'refused'],
    ['169.254.169.254', 'refused'],
    ['fe80::1', 'refused'],
    ['224.0.0.1', 'refused'],
    ['ff02::1', 'refused'],
    ['255.255.255.255', 'refused'],
    ['::ffff:169.254.169.254', 'refused'],
    ['2002:7f00:1::1', 'refused'],
    ['not an address', 'refused'],
  ])('%s is %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  const policy = (allowLocalNetworks: boolean, answers: Record<string, string[]>) =>
    new HostPolicy({ allowLocalNetworks } as AppConfig, async (host) => {
      if (!(host in answers)) throw new Error('ENOTFOUND');
      return answers[host];
    });

  it('allows a name only when every address it resolves to is allowed', async () => {
    const answers = { 'mixed.example': ['8.8.8.8', '10.0.0.1'], 'public.example': ['8.8.8.8', '2606:4700:4700::1111'] };
    await expect(policy(false, answers).vet(new URL('https://mixed.example/x'))).rejects.toBeInstanceOf(DisallowedHostError);
    const vetted = await policy(false, answers).vet(new URL('https://public.example/x'));
    expect(vetted).toMatchObject({ host: 'public.example', port: 443, addresses: ['8.8.8.8', '2606:4700:4700::1111'] });
    await expect(policy(true, answers).vet(new URL('https://mixed.example/x'))).resolves.toBeDefined();
  });

  it('refuses a name that does not resolve, and judges IP literals as they are', async () => {
    await expect(policy(true, {}).vet(new URL('http://nowhere.example/x'))).rejects.toBeInstanceOf(DisallowedHostError);
    await expect(policy(false, {}).vet(new URL('http://127.0.0.1:8080/x'))).rejects.toBeInstanceOf(DisallowedHostError);
    await expect(policy(true, {}).vet(new URL('http://[::1]:8080/x'))).resolves.toMatchObject({ host: '::1', port: 8080 });
    await expect(policy(true, {}).vet(new URL('http://169.254.169.254/x'))).rejects.toBeInstanceOf(DisallowedHostError);
    await expect(policy(true, {}).vet(new URL('git://0.0.0.0/x'))).rejects.toBeInstanceOf(DisallowedHostError);
  });
});
