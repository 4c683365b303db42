extension String {
    /// Whether the two strings hold the same UTF-8 bytes (Swift's `==` compares by canonical equivalence, so
    /// "é" precomposed and decomposed are equal there, but they are different keys to SQLite and to the caches).
    ///
    /// Compared as two buffers where the strings are stored contiguously (native and small strings): walking both
    /// `utf8` views advances and compares string indices through generic code, byte by byte.
    package func hasSameUTF8(as other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        let compared: Bool?? = utf8.withContiguousStorageIfAvailable { mine in
            other.utf8.withContiguousStorageIfAvailable { theirs in mine.elementsEqual(theirs) }
        }
        if let compared = compared ?? nil { return compared }
        return utf8.elementsEqual(other.utf8)
    }
}
