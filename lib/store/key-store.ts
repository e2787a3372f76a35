import type { CertificateKey } from '../core/index.ts';
import { isAbsent } from './conditions.ts';
import { keys, MAX_PARTITION_KEY_BYTES } from './layout.ts';
import type { Table } from './table.ts';

/**
 * The public key of every KMS key that ever signed a certificate, written before its first
 * signature leaves the API: a certificate keeps verifying after the stack's key is replaced
 * (or access to the old key is gone), for as long as the table lives.
 */
export class KeyStore {
  readonly #table: Table;

  constructor(options: { readonly table: Table }) {
    this.#table = options.table;
  }

  /** Records `key` once; a key id always names the same public key. */
  async remember(key: CertificateKey): Promise<void> {
    await this.#table.put(keys.certificateKey(key.keyId), key, isAbsent);
  }

  async get(keyId: string): Promise<CertificateKey | undefined> {
    const key = keys.certificateKey(keyId);
    // Longer than a partition key may be (2,048 bytes): no key was ever stored under it.
    if (Buffer.byteLength(key.pk) > MAX_PARTITION_KEY_BYTES) return undefined;
    const item = await this.#table.read<CertificateKey>(key);
    return item
      ? { keyId: item.keyId, algorithm: item.algorithm, publicKeyPem: item.publicKeyPem }
      : undefined;
  }
}
