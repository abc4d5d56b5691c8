import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { ApplyError } from '../../src/apply/errors.js';
import { loadConfig } from '../../src/apply/load.js';
import { tempDir } from '../helpers/temp.js';

const CODE = 'module.exports = async (req) => ({ raw: req.args });\n';

/** A project folder with svc.yaml (and other files) written as given. */
async function project(files: Record<string, string>): Promise<string> {
  const dir = await tempDir();
  for (const [name, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), text);
  }
  return dir;
}

/** The loader's error message (it must fail). */
async function loadError(files: Record<string, string>, env: Record<string, string> = {}): Promise<ApplyError> {
  const cwd = await project(files);
  const error = await loadConfig('svc.yaml', { cwd, env }).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ApplyError);
  return error as ApplyError;
}

const VALID = `# the whole shape
applications:
  backend:
    type: private
    permissions: [token:use]
    rules:
      - priority: 1
        container: /pci/
        transform: reveal
        permissions: [token:read]
reactors:
  charge:
    code: reactors/charge.js
    application: backend
    configuration:
      STRIPE_KEY: \${env:STRIPE_KEY}
      LITERAL: "cost: $\${not-env}"
proxies:
  stripe:
    destination_url: https://api.stripe.com/\${env:API_VERSION}
    request_transform: transforms/sign.js
    configuration: stripe.env
    require_auth: false
    renamed_from: old-stripe
`;

describe('loadConfig: a valid file', () => {
  test('everything resolved: code read, ${env:} filled in, $${ kept literal, .env parsed, defaults applied', async () => {
    const cwd = await project({
      'svc.yaml': VALID,
      'reactors/charge.js': CODE,
      'transforms/sign.js': CODE,
      'stripe.env': '# comment\nTOKEN="a b"\n',
    });
    const desired = await loadConfig('svc.yaml', { cwd, env: { STRIPE_KEY: 'sk_test', API_VERSION: 'v1' } });
    expect(desired.file).toBe('svc.yaml');
    expect(desired.applications).toEqual([
      {
        name: 'backend',
        type: 'private',
        permissions: ['token:use'],
        rules: [{ priority: 1, container: '/pci/', transform: 'reveal', permissions: ['token:read'] }],
        line: 3,
      },
    ]);
    expect(desired.reactors).toEqual([
      {
        name: 'charge',
        code: { path: 'reactors/charge.js', code: CODE },
        configuration: { STRIPE_KEY: 'sk_test', LITERAL: 'cost: ${not-env}' },
        application: 'backend',
        line: 12,
      },
    ]);
    expect(desired.proxies[0]).toMatchObject({
      name: 'stripe',
      destination_url: 'https://api.stripe.com/v1',
      request_transform: { path: 'transforms/sign.js', code: CODE },
      response_transform: null,
      configuration: { TOKEN: 'a b' },
      application: null,
      require_auth: false,
      renamedFrom: 'old-stripe',
    });
    expect(desired.files.map((file) => file.path)).toEqual([
      'svc.yaml',
      'reactors/charge.js',
      'transforms/sign.js',
      'stripe.env',
    ]);
    expect(desired.files.every((file) => /^[0-9a-f]{64}$/.test(file.digest))).toBe(true);
  });

  test('JSON is a valid svc.yaml too (YAML reads it), and an empty file is an empty config', async () => {
    const cwd = await project({
      'svc.json': JSON.stringify({ reactors: { charge: { code: 'c.js' } } }),
      'c.js': CODE,
      'svc.yaml': '',
    });
    expect((await loadConfig('svc.json', { cwd, env: {} })).reactors.map((reactor) => reactor.name)).toEqual([
      'charge',
    ]);
    expect(await loadConfig('svc.yaml', { cwd, env: {} })).toMatchObject({
      applications: [],
      reactors: [],
      proxies: [],
    });
  });
});

describe('loadConfig: each error names svc.yaml:line and the path', () => {
  test('an Application reference with a typo suggests the name', async () => {
    const error = await loadError({
      'svc.yaml':
        'applications:\n  backend:\n    type: private\n    permissions: [token:use]\nreactors:\n  charge:\n    code: c.js\n    application: backnd\n',
      'c.js': CODE,
    });
    expect(error.message).toBe(
      'svc.yaml:8:18 reactors.charge.application: no Application "backnd" (did you mean backend?)',
    );
  });

  test('an unknown key is an error at its own line, naming the known ones', async () => {
    const error = await loadError({
      'svc.yaml': 'reactors:\n  charge:\n    code: c.js\n    timeout: 30\n',
      'c.js': CODE,
    });
    expect(error.message).toBe(
      'svc.yaml:4:5 reactors.charge.timeout: unknown key "timeout" (known: code, configuration, application, renamed_from)',
    );
  });

  test('a missing environment variable', async () => {
    const error = await loadError({
      'svc.yaml':
        'proxies:\n  p:\n    destination_url: https://x.test\n    configuration:\n      TOKEN: ${env:NOT_SET}\n',
    });
    expect(error.message).toBe(
      'svc.yaml:5:14 proxies.p.configuration.TOKEN: the environment variable NOT_SET is not set (${env:NOT_SET})',
    );
  });

  test('a ${...} that is not ${env:NAME}', async () => {
    const error = await loadError({ 'svc.yaml': 'proxies:\n  p:\n    destination_url: https://${HOST}/\n' });
    expect(error.message).toMatch(/^svc\.yaml:3:22 proxies\.p\.destination_url: \$\{HOST\} is not \$\{env:NAME\}/);
  });

  test('a YAML syntax error: file:line:column', async () => {
    const error = await loadError({ 'svc.yaml': 'reactors:\n  charge:\n    code: a: b\n' });
    expect(error.message).toMatch(/^svc\.yaml:3:11 /);
  });

  test('a duplicate key is a syntax error, not a silent override', async () => {
    const error = await loadError({ 'svc.yaml': 'reactors:\n  a:\n    code: c.js\n  a:\n    code: d.js\n' });
    expect(error.message).toMatch(/^svc\.yaml:4:3 Map keys must be unique/);
  });

  test('a code file that does not parse: its own path:line:column, and where svc.yaml names it', async () => {
    const error = await loadError({
      'svc.yaml': 'reactors:\n  charge:\n    code: src/charge.js\n',
      'src/charge.js': 'module.exports = async (req) => {\n  return { raw: ( };\n};\n',
    });
    expect(error.message).toBe('src/charge.js:2:19 Unexpected token (reactors.charge.code)');
  });

  test('an empty code file (the API refuses one; an editor mid-save leaves one)', async () => {
    const error = await loadError({ 'svc.yaml': 'reactors:\n  charge:\n    code: c.js\n', 'c.js': '\n' });
    expect(error.message).toBe('svc.yaml:3:11 reactors.charge.code: c.js is empty');
  });

  test('a code file that is not there', async () => {
    const error = await loadError({ 'svc.yaml': 'reactors:\n  charge:\n    code: missing.js\n' });
    expect(error.message).toBe('svc.yaml:3:11 reactors.charge.code: cannot read missing.js: no such file');
  });

  test('a configuration value that YAML reads as a number says to quote it, without echoing it', async () => {
    const error = await loadError({
      'svc.yaml': 'reactors:\n  charge:\n    code: c.js\n    configuration:\n      PORT: 8443\n',
      'c.js': CODE,
    });
    expect(error.message).toBe('svc.yaml:5:13 reactors.charge.configuration.PORT: must be a string (put it in quotes)');
  });

  test('a permission the type does not allow, and an Application without any grant', async () => {
    const error = await loadError({
      'svc.yaml':
        'applications:\n  admin:\n    type: management\n    permissions: [token:use]\n  empty:\n    type: private\n',
    });
    expect(error.issues).toEqual([
      'svc.yaml:4:19 applications.admin.permissions[0]: "token:use" is not allowed for a management Application (allowed: application:create, application:read, application:update, application:delete, proxy:create, proxy:read, proxy:update, proxy:delete, reactor:create, reactor:read, reactor:update, reactor:delete)',
      'svc.yaml:5:3 applications.empty: give it permissions or rules (at least one of them non-empty)',
    ]);
    // Every problem is in the message, a line each, after how many there are.
    expect(error.message).toBe(['svc.yaml has 2 problems:', ...error.issues].join('\n'));
  });

  test('a reactor may not use a management Application', async () => {
    const error = await loadError({
      'svc.yaml':
        'applications:\n  admin:\n    type: management\n    permissions: [reactor:read]\nreactors:\n  r:\n    code: c.js\n    application: admin\n',
      'c.js': CODE,
    });
    expect(error.message).toBe(
      'svc.yaml:8:18 reactors.r.application: "admin" is a management Application; reactors take a private or public one',
    );
  });

  test('renamed_from cannot name a resource still in the file', async () => {
    const error = await loadError({
      'svc.yaml': 'reactors:\n  a:\n    code: c.js\n  b:\n    code: c.js\n    renamed_from: a\n',
      'c.js': CODE,
    });
    expect(error.message).toBe(
      'svc.yaml:6:19 reactors.b.renamed_from: "a" is still in reactors; a rename takes the old name out of the file',
    );
  });

  test('wrong types and values are each at their line', async () => {
    const error = await loadError({
      'svc.yaml':
        'applications:\n  a:\n    type: admin\n    permissions: token:use\nproxies:\n  p:\n    destination_url: ftp://x\n    require_auth: "no"\n',
    });
    expect(error.issues).toEqual([
      'svc.yaml:3:11 applications.a.type: must be one of private, public, management',
      'svc.yaml:4:18 applications.a.permissions: must be a list',
      'svc.yaml:7:22 proxies.p.destination_url: must be an http:// or https:// URL',
      'svc.yaml:8:19 proxies.p.require_auth: must be true or false',
    ]);
  });

  test('a YAML alias bomb ("billion laughs") is one line naming the file, not expanded', async () => {
    const levels = 'abcdefghi'.split('');
    const bomb = levels
      .map((name, i) =>
        i === 0
          ? `${name}: &${name} [x, x, x, x, x, x, x, x, x]`
          : `${name}: &${name} [${Array(9)
              .fill(`*${levels[i - 1]}`)
              .join(', ')}]`,
      )
      .join('\n');
    const error = await loadError({ 'svc.yaml': `${bomb}\n` });
    expect(error.message).toBe(
      'svc.yaml: its aliases (*name) expand to too many copies (a "billion laughs"); write the values out, or refer to each anchor fewer times.',
    );
  });

  test('svc.yaml that is not there', async () => {
    const cwd = await project({});
    await expect(loadConfig('svc.yaml', { cwd, env: {} })).rejects.toThrow(
      'Cannot read svc.yaml: no such file (-f names another file; `svc import` writes one from what the target holds).',
    );
  });
});

describe('loadConfig: every problem is said, each at file:line:column', () => {
  test('a misspelt reference and a missing code file are both said (not "and 1 more problem")', async () => {
    const error = await loadError({
      'svc.yaml':
        'applications:\n  backend:\n    type: private\n    permissions: [token:use]\nreactors:\n  charge:\n    code: c.js\n    application: backnd\n  refund:\n    code: missing.js\n',
      'c.js': CODE,
    });
    expect(error.issues).toEqual([
      'svc.yaml:8:18 reactors.charge.application: no Application "backnd" (did you mean backend?)',
      'svc.yaml:10:11 reactors.refund.code: cannot read missing.js: no such file',
    ]);
    expect(error.message).toBe(
      [
        'svc.yaml has 2 problems:',
        'svc.yaml:8:18 reactors.charge.application: no Application "backnd" (did you mean backend?)',
        'svc.yaml:10:11 reactors.refund.code: cannot read missing.js: no such file',
      ].join('\n'),
    );
  });

  test("a schema error does not hide the other resources' problems (a reference, a broken code file)", async () => {
    const error = await loadError({
      'svc.yaml':
        'applications:\n  backend:\n    type: private\n    permissions: [token:use]\n    colour: red\nreactors:\n  charge:\n    code: c.js\n    application: backnd\n  refund:\n    code: bad.js\n',
      'c.js': CODE,
      'bad.js': 'module.exports = (;\n',
    });
    expect(error.issues).toEqual([
      'svc.yaml:5:5 applications.backend.colour: unknown key "colour" (known: type, permissions, rules, renamed_from)',
      // backend's shape was refused: a reference to a name close to it is not said to name nothing.
      'svc.yaml:9:18 reactors.charge.application: no Application "backnd" (did you mean backend?)',
      'bad.js:1:19 Unexpected token (reactors.refund.code)',
    ]);
  });

  test('the message lists the first 50 problems and counts the rest; issues holds them all', async () => {
    const reactors = Array.from({ length: 60 }, (_, i) => `  r${i}:\n    code: missing${i}.js\n`).join('');
    const error = await loadError({ 'svc.yaml': `reactors:\n${reactors}` });
    expect(error.issues).toHaveLength(60);
    const lines = error.message.split('\n');
    expect(lines[0]).toBe('svc.yaml has 60 problems:');
    expect(lines[1]).toBe('svc.yaml:3:11 reactors.r0.code: cannot read missing0.js: no such file');
    expect(lines[2]).toBe('svc.yaml:5:11 reactors.r1.code: cannot read missing1.js: no such file');
    expect(lines).toHaveLength(52);
    expect(lines[51]).toBe('… and 10 more');
  });
});

describe('loadConfig with holdBroken (watching): a broken file holds back only its own resource', () => {
  test('the others load; the held one is named with its file:line:column; svc.yaml problems still refuse', async () => {
    const cwd = await project({
      'svc.yaml': 'reactors:\n  good:\n    code: c.js\n  bad:\n    code: bad.js\n  gone:\n    code: gone.js\n',
      'c.js': CODE,
      'bad.js': 'module.exports = (;\n',
    });
    const desired = await loadConfig('svc.yaml', { cwd, env: {}, holdBroken: true });
    expect(desired.reactors.map((reactor) => reactor.name)).toEqual(['good']);
    expect(desired.held).toEqual([
      { address: 'reactors.bad', message: 'bad.js:1:19 Unexpected token (reactors.bad.code)' },
      { address: 'reactors.gone', message: 'svc.yaml:7:11 reactors.gone.code: cannot read gone.js: no such file' },
    ]);
    expect(desired.unread).toEqual([path.join(cwd, 'gone.js')]);
    // Without holdBroken (a one-off svc apply) the same file refuses as a whole.
    await expect(loadConfig('svc.yaml', { cwd, env: {} })).rejects.toThrow(/^svc\.yaml has 2 problems:/);
    await writeFile(
      path.join(cwd, 'svc.yaml'),
      'reactors:\n  good:\n    code: c.js\n    application: nope\n  bad:\n    code: bad.js\n',
    );
    await expect(loadConfig('svc.yaml', { cwd, env: {}, holdBroken: true })).rejects.toThrow(
      /^svc\.yaml has 2 problems:\nsvc\.yaml:4:18 reactors\.good\.application: no Application "nope"/,
    );
  });
});
