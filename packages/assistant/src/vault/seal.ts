import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

// AES-256-GCM with a fresh random 12-byte IV per encryption. The additional authenticated data binds a
// ciphertext to where it belongs (a secret's name), so entries cannot be swapped inside vault.json.

export const IV_BYTES = 12;
export const TAG_BYTES = 16;

/** An encrypted value as stored in vault.json, every field base64. */
export interface Sealed {
  iv: string;
  tag: string;
  data: string;
}

export function seal(key: Buffer, plaintext: string, aad: string): Sealed {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(aad, "utf8"));
  const data = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return { iv: iv.toString("base64"), tag: cipher.getAuthTag().toString("base64"), data: data.toString("base64") };
}

/** The plaintext, or undefined when authentication fails (wrong key, wrong AAD, or altered bytes). */
export function unseal(key: Buffer, sealed: Sealed, aad: string): string | undefined {
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(sealed.iv, "base64"), {
      authTagLength: TAG_BYTES,
    });
    decipher.setAAD(Buffer.from(aad, "utf8"));
    decipher.setAuthTag(Buffer.from(sealed.tag, "base64"));
    return Buffer.concat([decipher.update(Buffer.from(sealed.data, "base64")), decipher.final()]).toString("utf8");
  } catch {
    return undefined;
  }
}
