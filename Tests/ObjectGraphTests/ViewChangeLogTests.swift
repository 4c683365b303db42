import Testing
@testable import ObjectGraph

/// The invariants of ``ViewChangeLog``, which children rely on to follow what lies below: nothing a reader did not
/// make itself is missed, and a reader the log left behind is told that everything may have changed.
@Suite struct ViewChangeLogTests {
    let a = ObjectID.temporary("Entry")
    let b = ObjectID.temporary("Entry")
    let reader = ObjectIdentifier(ViewChangeLogTests.Reader())
    final class Reader {}

    @Test func aLogWithoutReadersRecordsNothing() {
        let log = ViewChangeLog()
        log.record([a])
        #expect(log.end == 0)
    }

    @Test func aReaderSeesEveryChangeAfterItsPositionButItsOwn() {
        let log = ViewChangeLog()
        log.isRead.value = true
        log.record([a])
        let position = log.end
        log.record([b], source: reader)
        log.record([a])
        let (changes, end) = log.changes(after: position, for: reader)
        #expect(changes.objects == [a])
        #expect(!changes.everything)
        #expect(end == log.end)
        #expect(log.changes(after: end, for: reader).changes.objects.isEmpty)
    }

    @Test func aRecordAfterAReadIsSeenByTheNextRead() {
        let log = ViewChangeLog()
        log.isRead.value = true
        log.record([a])
        let (_, end) = log.changes(after: 0, for: reader)
        log.record([a])
        #expect(log.changes(after: end, for: reader).changes.objects == [a])
    }

    @Test func aReaderTheLogLeftBehindRefreshesEverything() {
        let log = ViewChangeLog()
        log.isRead.value = true
        log.record(Array(repeating: a, count: ViewChangeLog.capacity + 1))
        let (changes, end) = log.changes(after: 0, for: reader)
        #expect(changes.everything)
        #expect(end == ViewChangeLog.capacity + 1)
        log.recordEverything()
        #expect(log.changes(after: end, for: reader).changes.everything)
    }
}
