/// FNV-1a over bytes: a few instructions per byte, which suits the short keys of the request caches (the general
/// hasher's set-up and finalization cost more than their bytes).
package struct FNV1a {
    package private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    package init() {}

    package mutating func combine(byte: UInt8) {
        value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
    }

    package mutating func combine(_ word: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { combine(byte: UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
    }

    /// Feeds the string's UTF-8 bytes and their count.
    package mutating func combine(bytesOf string: String) {
        combine(UInt64(string.utf8.count))
        let done: Void? = string.utf8.withContiguousStorageIfAvailable { bytes in
            for byte in bytes { combine(byte: byte) }
        }
        if done == nil {
            for byte in string.utf8 { combine(byte: byte) }
        }
    }
}
