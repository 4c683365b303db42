import Foundation
import PredicateFormat

/// Turns an app's value into the data a transformable attribute stores, and back: Core Data's value transformers.
///
/// ```swift
/// struct Reversed: AttributeValueTransformer {
///     func data(from value: Any) throws -> Data { Data(((value as? String) ?? "").utf8.reversed()) }
///     func value(from data: Data) throws -> Any { String(decoding: data.reversed(), as: UTF8.self) }
/// }
/// ValueTransformers.register(Reversed(), named: "Reversed")
/// ```
public protocol AttributeValueTransformer: Sendable {
    /// The data stored for `value`.
    func data(from value: Any) throws -> Data
    /// The value `data` stores.
    func value(from data: Data) throws -> Any
}

/// The value transformers a model's transformable attributes name (`valueTransformerName` in Xcode), by name.
///
/// Registered from the start, under Core Data's names (`NSSecureUnarchiveFromData`,
/// `NSSecureUnarchiveFromDataTransformer`, `NSKeyedUnarchiveFromData`): a keyed archive of property-list values
/// (strings, numbers, dates, data, URLs, UUIDs, and arrays and dictionaries of them), byte for byte what Core Data
/// stores, so data written by a Core Data app reads back.
public enum ValueTransformers {
    private static let registry = Protected<[String: any AttributeValueTransformer]>(
        Dictionary(uniqueKeysWithValues: ["NSSecureUnarchiveFromData", "NSSecureUnarchiveFromDataTransformer", "NSKeyedUnarchiveFromData"]
            .map { ($0, KeyedArchiveTransformer() as any AttributeValueTransformer) }))

    /// Makes `transformer` the one attributes naming `name` use (replacing any before it).
    public static func register(_ transformer: any AttributeValueTransformer, named name: String) {
        registry.withLock { $0[name] = transformer }
    }

    /// The transformer registered under `name`, if any.
    public static func transformer(named name: String) -> (any AttributeValueTransformer)? {
        registry.withLock { $0[name] }
    }
}

/// Core Data's default transformer: an `NSKeyedArchiver` archive, read back allowing property-list classes only.
struct KeyedArchiveTransformer: AttributeValueTransformer {
    static let allowedClasses: [AnyClass] = [
        NSArray.self, NSDictionary.self, NSSet.self, NSString.self, NSNumber.self, NSDate.self, NSData.self, NSURL.self, NSUUID.self, NSNull.self,
    ]

    func data(from value: Any) throws -> Data {
        try NSKeyedArchiver.archivedData(withRootObject: value as AnyObject, requiringSecureCoding: true)
    }

    func value(from data: Data) throws -> Any {
        guard let value = try NSKeyedUnarchiver.unarchivedObject(ofClasses: Self.allowedClasses, from: data) else {
            throw CocoaError(.coderReadCorrupt)
        }
        return value
    }
}
