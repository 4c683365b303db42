import Foundation
import Testing
@testable import ObjectGraph

/// In-memory sorting orders values as the SQLite store does, and the order is total: NaN sorts with nil, and
/// integers and Doubles compare exactly.
@Suite struct StoreOrderTests {
    static let values: [AttributeValue] = [
        .null, .double(.nan), .double(-.infinity), .int(.min), .int(-1), .bool(false), .double(-0.0), .int(0), .bool(true),
        .double(0.5), .int(9_007_199_254_740_992), .double(9_007_199_254_740_992), .int(9_007_199_254_740_993), .int(.max),
        .double(9_223_372_036_854_775_808), .double(.infinity), .date(Date(timeIntervalSinceReferenceDate: 1)), .string(""),
        .string("a"), .string("é"), .data(Data()), .data(Data([0])),
    ]

    @Test func theOrderIsTotal() {
        for a in Self.values {
            #expect(a.storeOrder(a) == .orderedSame, "\(a)")
            for b in Self.values {
                let forward = a.storeOrder(b), backward = b.storeOrder(a)
                #expect(forward.rawValue == -backward.rawValue, "\(a) and \(b) disagree")
                for c in Self.values where forward != .orderedDescending && b.storeOrder(c) != .orderedDescending {
                    #expect(a.storeOrder(c) != .orderedDescending, "\(a) ≤ \(b) ≤ \(c) but not \(a) ≤ \(c)")
                }
            }
        }
    }

    @Test func nanSortsWithNilAndIntegersAgainstDoublesAreExact() {
        #expect(AttributeValue.double(.nan).storeOrder(.null) == .orderedSame)
        #expect(AttributeValue.double(.nan).storeOrder(.double(-.infinity)) == .orderedAscending)
        #expect(AttributeValue.int(9_007_199_254_740_993).storeOrder(.double(9_007_199_254_740_992)) == .orderedDescending)
        #expect(AttributeValue.int(.max).storeOrder(.double(9_223_372_036_854_775_808)) == .orderedAscending)
        #expect(AttributeValue.int(1).storeOrder(.bool(true)) == .orderedSame)
    }
}
