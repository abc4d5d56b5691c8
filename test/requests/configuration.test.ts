import { describe, expect, it } from 'vitest';
import { configurationPatch, parseEnvText, parsePair, parsePairs } from '../../src/requests/configuration.js';
import { InvalidInputError } from '../../src/requests/errors.js';

describe('parseEnvText', () => {
  it('reads KEY=VALUE lines with comments, quotes, export and blank lines as dotenv does', () => {
    const lines = [
      '# a comment',
      'API_URL=https://example.com',
      '',
      'export TOKEN="a b # not a comment"',
      "SINGLE='x=y'",
      'EMPTY=',
    ];
    expect(parseEnvText(lines.join('\n'))).toEqual({
      API_URL: 'https://example.com',
      TOKEN: 'a b # not a comment',
      SINGLE: 'x=y',
      EMPTY: '',
    });
  });

  it('gives an empty map for an empty text', () => {
    expect(parseEnvText('')).toEqual({});
  });
});

describe('parsePair', () => {
  it('splits at the first =, so a value may hold = and be empty', () => {
    expect(parsePair('URL=a=b', '--metadata')).toEqual(['URL', 'a=b']);
    expect(parsePair('EMPTY=', '--metadata')).toEqual(['EMPTY', '']);
  });

  it.each(['novalue', '=v', ''])('refuses %j naming the input and the form it takes', (pair) => {
    expect(() => parsePair(pair, '--metadata')).toThrow(
      new InvalidInputError(`--metadata takes KEY=VALUE, not "${pair}".`),
    );
    const expected = `configuration takes KEY=VALUE or @file.env, not "${pair}".`;
    expect(() => parsePair(pair, 'configuration', 'KEY=VALUE or @file.env')).toThrow(expected);
  });
});

describe('parsePairs', () => {
  it('keeps "not given" apart from "given none"', () => {
    expect(parsePairs(undefined, '--metadata')).toBeUndefined();
    expect(parsePairs([], '--metadata')).toEqual({});
  });

  it('lets a later pair win', () => {
    expect(parsePairs(['A=1', 'B=2', 'A=3'], '--metadata')).toEqual({ A: '3', B: '2' });
  });

  it('fails on the first malformed pair', () => {
    expect(() => parsePairs(['A=1', 'broken'], '--metadata')).toThrow(InvalidInputError);
  });
});

describe('configurationPatch', () => {
  it('sets the given keys and removes the unset ones with null', () => {
    expect(configurationPatch({ A: '1' }, ['B'])).toEqual({ A: '1', B: null });
  });

  it('removes a key that is both set and unset (the removal is the later word)', () => {
    expect(configurationPatch({ A: '1' }, ['A'])).toEqual({ A: null });
  });

  it('is undefined when there is nothing to change, so a patch leaves configuration out', () => {
    expect(configurationPatch(undefined, undefined)).toBeUndefined();
    expect(configurationPatch({}, [])).toBeUndefined();
  });
});
