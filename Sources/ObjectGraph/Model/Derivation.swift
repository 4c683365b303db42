import Foundation
import PredicateFormat

/// How the store computes a derived attribute at save (Core Data's `derivationExpression`), for the expressions
/// Core Data allows.
///
/// ```swift
/// var count = AttributeDescription("bookCount", .int64)
/// count.derivation = "books.@count"          // also: "author.name", "now()", "lowercase:(title)", "canonical:(title)"
/// ```
public enum Derivation: Sendable, Hashable {
    /// The value of an attribute of the destination of a to-one relationship (`author.name`).
    case toOne(relationship: String, attribute: String)
    /// The number of objects in a to-many relationship (`books.@count`).
    case count(relationship: String)
    /// The time of the save that wrote the object (`now()`).
    case now
    /// A String attribute of the same object, lowercased, uppercased, or without case and diacritics
    /// (`lowercase:(title)`, `uppercase:(title)`, `canonical:(title)`).
    case lowercase(attribute: String)
    case uppercase(attribute: String)
    case canonical(attribute: String)

    /// Reads a derivation expression as Xcode writes it; nil for one Core Data does not allow.
    public init?(_ text: String) {
        let expression = text.trimmingCharacters(in: .whitespaces)
        if expression == "now()" {
            self = .now
            return
        }
        for (name, make) in [("lowercase:", Derivation.lowercase), ("uppercase:", Derivation.uppercase), ("canonical:", Derivation.canonical)]
        where expression.hasPrefix(name) {
            var argument = expression.dropFirst(name.count).trimmingCharacters(in: .whitespaces)
            if argument.hasPrefix("(") && argument.hasSuffix(")") { argument = String(argument.dropFirst().dropLast()) }
            guard Self.isKey(argument) else { return nil }
            self = make(argument)
            return
        }
        let parts = expression.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2, Self.isKey(parts[0]) else { return nil }
        if parts[1] == "@count" {
            self = .count(relationship: parts[0])
        } else if Self.isKey(parts[1]) {
            self = .toOne(relationship: parts[0], attribute: parts[1])
        } else {
            return nil
        }
    }

    private static func isKey(_ text: String) -> Bool {
        !text.isEmpty && text.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
    }

    /// The type a derived attribute of this kind must have, when there is one to check.
    func check(_ attribute: AttributeDescription, of entity: String, in byName: [String: EntityDescription], chain: [EntityDescription]) throws {
        func fail(_ reason: String) -> ObjectGraphError { .invalidModel(entity: entity, property: attribute.name, reason: reason) }
        let attributes = chain.flatMap(\.attributes)
        let relationships = chain.flatMap(\.relationships)
        switch self {
        case .now:
            guard attribute.type == .date else { throw fail("now() derives a Date, but the attribute is \(attribute.type.name)") }
        case .lowercase(let key), .uppercase(let key), .canonical(let key):
            guard attributes.contains(where: { $0.name == key && $0.type == .string && !$0.isTransient }) else {
                throw fail("its derivation reads '\(key)', which is not a stored String attribute of \(entity)")
            }
            guard attribute.type == .string else { throw fail("a string function derives a String, but the attribute is \(attribute.type.name)") }
        case .count(let name):
            guard let relationship = relationships.first(where: { $0.name == name }), relationship.isToMany, !relationship.isTransient else {
                throw fail("its derivation counts '\(name)', which is not a stored to-many relationship of \(entity)")
            }
            guard [.int16, .int32, .int64].contains(attribute.type) else { throw fail("@count derives an integer, but the attribute is \(attribute.type.name)") }
        case .toOne(let name, let key):
            guard let relationship = relationships.first(where: { $0.name == name }), !relationship.isToMany, !relationship.isTransient else {
                throw fail("its derivation reads through '\(name)', which is not a stored to-one relationship of \(entity)")
            }
            var destination = byName[relationship.destinationEntityName]
            var found: AttributeDescription?
            while let current = destination, found == nil {
                found = current.attributes.first { $0.name == key }
                destination = current.parentName.flatMap { byName[$0] }
            }
            guard let found, !found.isTransient else {
                throw fail("its derivation reads '\(key)', which is not a stored attribute of \(relationship.destinationEntityName)")
            }
            guard found.type == attribute.type else {
                throw fail("its derivation reads \(relationship.destinationEntityName).\(key), a \(found.type.name), into a \(attribute.type.name)")
            }
        }
    }
}
