/// Lets the stack's writes to disk through one at a time, in the order they arrive.
///
/// A failed write hands its changes back to the main context; a second write running meanwhile could write newer
/// changes of the same objects first, and the handed-back ones over them later. One at a time, every write finds
/// the main context as the last one left it.
actor SerialGate {
    private var isTaken = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Waits for the gate, then takes it.
    func enter() async {
        guard isTaken else {
            isTaken = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    /// Gives the gate to the next in line, or frees it.
    func leave() {
        if waiting.isEmpty {
            isTaken = false
        } else {
            waiting.removeFirst().resume()
        }
    }
}
