import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  finalizeMessage,
  InvalidMessageError,
  NAME_PATTERN,
  pageMessage,
  parseWorkMessage,
} from '../../../lib/core/index.ts';
import { CHAIN_ID, DELETION_ID } from '../../helpers/records.ts';

const fence = { v: 1, tenant: 'acme', deletionId: DELETION_ID, generation: 2, round: 1 };
const aPageMessage = { ...fence, type: 'page', chainId: CHAIN_ID, page: 0 };
const aFinalizeMessage = { ...fence, type: 'finalize' };

describe('message builders', () => {
  it("builds a page message from a chain, which carries its deletion's fence", () => {
    const chain = { ...fence, chainId: CHAIN_ID, stream: 'logs' };

    expect(pageMessage(chain, 0)).toEqual({ ...aPageMessage, stream: 'logs' });
  });

  it('builds a finalize message from a deletion', () => {
    expect(finalizeMessage(fence)).toEqual(aFinalizeMessage);
  });

  it('builds only messages that parse', () => {
    const chain = { ...fence, chainId: CHAIN_ID };

    expect(parseWorkMessage(JSON.stringify(pageMessage(chain, 7)))).toEqual({
      ...aPageMessage,
      page: 7,
    });
  });
});

describe('parseWorkMessage', () => {
  it('parses a valid page message', () => {
    const body = JSON.stringify(aPageMessage);

    const message = parseWorkMessage(body);

    expect(message).toEqual(aPageMessage);
  });

  it('parses a valid finalize message', () => {
    const body = JSON.stringify(aFinalizeMessage);

    const message = parseWorkMessage(body);

    expect(message).toEqual(aFinalizeMessage);
  });

  describe.each<[string, string]>([
    ['not JSON', '{"v":1,'],
    ['JSON null', 'null'],
    ['a JSON array', JSON.stringify([aPageMessage])],
    ['another version', JSON.stringify({ ...aPageMessage, v: 2 })],
    ['no version', JSON.stringify({ ...aPageMessage, v: undefined })],
    ['an unknown type', JSON.stringify({ ...aPageMessage, type: 'delete' })],
    ['an extra prefix field', JSON.stringify({ ...aPageMessage, prefix: 'streams/acme/' })],
    ['an extra key field', JSON.stringify({ ...aPageMessage, key: 'streams/acme/logs/1/a' })],
    ['a page number on a finalize message', JSON.stringify({ ...aFinalizeMessage, page: 0 })],
    ['an uppercase tenant', JSON.stringify({ ...aPageMessage, tenant: 'Acme' })],
    ['a tenant with a slash', JSON.stringify({ ...aPageMessage, tenant: 'acme/logs' })],
    ['an empty tenant', JSON.stringify({ ...aPageMessage, tenant: '' })],
    ['a non-uuid deletionId', JSON.stringify({ ...aPageMessage, deletionId: 'deletion-1' })],
    ['a negative page', JSON.stringify({ ...aPageMessage, page: -1 })],
    ['a fractional page', JSON.stringify({ ...aPageMessage, page: 1.5 })],
    ['a page as a string', JSON.stringify({ ...aPageMessage, page: '1' })],
    ['generation 0', JSON.stringify({ ...aPageMessage, generation: 0 })],
    ['round 0', JSON.stringify({ ...aPageMessage, round: 0 })],
    ['a short chainId', JSON.stringify({ ...aPageMessage, chainId: 'abc' })],
    ['no chainId', JSON.stringify({ ...aPageMessage, chainId: undefined })],
  ])('a message with %s', (_, body) => {
    it('is rejected with InvalidMessageError', () => {
      const parse = () => parseWorkMessage(body);

      expect(parse).toThrow(InvalidMessageError);
    });
  });
});

const validFence = {
  v: fc.constant(1 as const),
  tenant: fc.stringMatching(NAME_PATTERN),
  deletionId: fc.uuid({ version: 4 }),
  generation: fc.integer({ min: 1 }),
  round: fc.integer({ min: 1 }),
};
const validMessage = fc.oneof(
  fc.record({
    ...validFence,
    type: fc.constant('page' as const),
    chainId: fc.stringMatching(/^[0-9a-f]{20}$/),
    page: fc.nat(),
  }),
  fc.record({ ...validFence, type: fc.constant('finalize' as const) }),
);

describe('parseWorkMessage, for any input', () => {
  it('accepts every valid message unchanged', () => {
    fc.assert(
      fc.property(validMessage, (message) => {
        expect(parseWorkMessage(JSON.stringify(message))).toEqual(message);
      }),
    );
  });

  it('rejects a valid message with any extra key', () => {
    fc.assert(
      fc.property(validMessage, fc.string(), fc.jsonValue(), (message, key, value) => {
        fc.pre(!Object.hasOwn(message, key));
        const body = JSON.stringify({ ...message, [key]: value });

        expect(() => parseWorkMessage(body)).toThrow(InvalidMessageError);
      }),
    );
  });

  it('rejects a valid message missing any one key', () => {
    fc.assert(
      fc.property(validMessage, fc.nat(), (message, index) => {
        const keys = Object.keys(message);
        const missing = keys[index % keys.length] ?? 'v';
        const body = JSON.stringify({ ...message, [missing]: undefined });

        expect(() => parseWorkMessage(body)).toThrow(InvalidMessageError);
      }),
    );
  });

  it('either rejects a JSON value or returns exactly that value, never a trimmed one', () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), validMessage), (value) => {
        const body = JSON.stringify(value);
        let parsed: unknown;
        try {
          parsed = parseWorkMessage(body);
        } catch (error) {
          expect(error).toBeInstanceOf(InvalidMessageError);
          return;
        }
        expect(parsed).toEqual(JSON.parse(body));
      }),
    );
  });
});
