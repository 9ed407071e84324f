/**
 * How deep a protobuf message nests, read from its bytes without decoding it and without
 * recursion. The SDK's generated decoders recurse once per level of a `google.protobuf.Struct`
 * (metadata, data parts), so a small request nested thousands of levels deep overflows the
 * stack inside the decoder, where grpc-js answers INTERNAL. This scan runs first.
 *
 * The wire format does not say which length-delimited fields are messages and which are
 * strings or bytes, so each one is read as a message as far as it parses, and as opaque bytes
 * from the first thing that does not parse. The depth found is therefore an upper bound: a
 * string that happens to be valid protobuf nested as deep would count too. Each byte is read
 * at most once.
 */

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LENGTH_DELIMITED = 2;
const WIRE_FIXED32 = 5;

/** Whether `bytes` hold length-delimited fields nested more than `maxDepth` levels inside each other. */
export function protoNestsDeeperThan(bytes: Uint8Array, maxDepth: number): boolean {
  /** The end of each field being read as a message; the first is the whole input. */
  const ends: number[] = [bytes.length];
  let pos = 0;

  /** A varint at `pos`, advancing past it; -1 when it is cut off or longer than 32 bits need. */
  const varint = (end: number): number => {
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (pos >= end) return -1;
      const byte = bytes[pos++]!;
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
    return -1;
  };
  /** Skips a 64-bit varint value (an int64 may take ten bytes); false when it is cut off. */
  const skipVarint = (end: number): boolean => {
    for (let i = 0; i < 10; i++) {
      if (pos >= end) return false;
      if (bytes[pos++]! < 0x80) return true;
    }
    return false;
  };

  for (;;) {
    const end = ends[ends.length - 1]!;
    if (pos === end) {
      if (ends.length === 1) return false;
      ends.pop();
      continue;
    }
    const tag = varint(end);
    let parsed = tag > 7; // field number 0 is not a field
    if (parsed) {
      switch (tag & 7) {
        case WIRE_VARINT:
          parsed = skipVarint(end);
          break;
        case WIRE_FIXED64:
          pos += 8;
          parsed = pos <= end;
          break;
        case WIRE_FIXED32:
          pos += 4;
          parsed = pos <= end;
          break;
        case WIRE_LENGTH_DELIMITED: {
          const length = varint(end);
          parsed = length >= 0 && pos + length <= end;
          if (parsed && length > 0) {
            ends.push(pos + length);
            if (ends.length - 1 > maxDepth) return true;
          }
          break;
        }
        default:
          parsed = false; // groups (3, 4) are not used by A2A; 6 and 7 do not exist
      }
    }
    if (!parsed) {
      // Not a message after all: the field is opaque bytes, and its parent goes on after it.
      // At the top this is not protobuf at all, which the real decoder will say.
      if (ends.length === 1) return false;
      pos = ends.pop()!;
    }
  }
}
