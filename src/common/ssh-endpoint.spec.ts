import { loadConfig } from '../config/config';
import { sshCloneUrl, SshEndpoint } from './ssh-endpoint';

function endpoint(env: Record<string, string>): SshEndpoint {
  const config = loadConfig(env);
  return new SshEndpoint(config, config.ssh);
}

describe('ssh_url', () => {
  it('takes the scp-like form on port 22 and the ssh:// form elsewhere', () => {
    expect(sshCloneUrl({ user: 'git', host: 'example.com', port: 22 }, 'alice/proj')).toBe('git@example.com:alice/proj.git');
    expect(sshCloneUrl({ user: 'git', host: 'example.com', port: 2222 }, 'alice/proj')).toBe('ssh://git@example.com:2222/alice/proj.git');
    expect(sshCloneUrl({ user: 'forge', host: '[::1]', port: 2200 }, 'a/b')).toBe('ssh://forge@[::1]:2200/a/b.git');
  });

  it('advertises SSH_PORT when set, else the port actually bound', () => {
    const bound = endpoint({ SSH_LISTEN_PORT: '0', ROOT_URL: 'http://[::1]:3000/' });
    bound.bound(40123);
    expect({ port: bound.port, host: bound.host, user: bound.user }).toEqual({ port: 40123, host: '[::1]', user: 'git' });
    const fixed = endpoint({ SSH_LISTEN_PORT: '0', SSH_PORT: '22', SSH_USER: 'forge' });
    fixed.bound(40123);
    expect({ port: fixed.port, user: fixed.user }).toEqual({ port: 22, user: 'forge' });
    expect(endpoint({}).port).toBe(2222);
  });
});
