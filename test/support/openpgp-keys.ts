import * as openpgp from 'openpgp';

/** openpgp's typings leave Subkey.toPacketList out; it exists at run time. */
export function subkeyPackets(subkey: openpgp.Subkey): openpgp.AnyPacket[] {
  return [...(subkey as unknown as { toPacketList(): openpgp.PacketList<openpgp.AnyPacket> }).toPacketList()];
}

/** A key's id as Anvil shows it: 16 upper-case hex digits. */
export const hex = (key: { getKeyID(): openpgp.KeyID }) => key.getKeyID().toHex().toUpperCase();
