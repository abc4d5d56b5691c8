import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidInputError, UnreadableFileError } from '../../src/requests/errors.js';
import { readCodeFile, readConfiguration, readEnvFile } from '../../src/requests/files.js';
import { tempDir } from '../helpers/temp.js';

describe('readCodeFile', () => {
  it('reads a path relative to the base folder', async () => {
    const dir = await tempDir();
    await mkdir(path.join(dir, 'reactors'));
    await writeFile(path.join(dir, 'reactors', 'charge.js'), 'module.exports = async () => 1;\n');
    expect(await readCodeFile('reactors/charge.js', dir)).toBe('module.exports = async () => 1;\n');
  });

  it('says which file it could not read and why', async () => {
    const dir = await tempDir();
    const error = await readCodeFile('nope.js', dir).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnreadableFileError);
    expect((error as Error).message).toBe(`Cannot read the code file ${path.join(dir, 'nope.js')}: no such file.`);
  });
});

describe('readConfiguration', () => {
  it('merges pairs and .env files in order, later values winning', async () => {
    const dir = await tempDir();
    await writeFile(path.join(dir, 'app.env'), 'A=from-file\nB=2\n');
    expect(await readConfiguration(['A=1', '@app.env', 'B=3'], dir, '--configuration')).toEqual({
      A: 'from-file',
      B: '3',
    });
  });

  it('is undefined when nothing is given, so an update keeps the current configuration', async () => {
    expect(await readConfiguration(undefined, '/', '--configuration')).toBeUndefined();
  });

  it('refuses a malformed pair naming both forms it takes', async () => {
    await expect(readConfiguration(['novalue'], '/', '--configuration')).rejects.toThrow(
      new InvalidInputError('--configuration takes KEY=VALUE or @file.env, not "novalue".'),
    );
  });

  it('names a missing .env file as a configuration file', async () => {
    const dir = await tempDir();
    const expected = `Cannot read the configuration file ${path.join(dir, 'missing.env')}: no such file.`;
    await expect(readEnvFile('missing.env', dir)).rejects.toThrow(expected);
  });
});
