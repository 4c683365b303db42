import SwiftSyntax

/// What the macros learn about one stored property from its declaration alone.
struct PropertyShape {
    enum Kind {
        /// A scalar attribute the library stores natively.
        case attribute
        /// Any other type: a Codable attribute stored as JSON.
        case codable
        /// A relationship to one object.
        case toOne(destination: String)
        /// A relationship to a set of objects.
        case toManySet(destination: String)
        /// A relationship to an ordered array of objects.
        case toManyArray(destination: String)
    }

    let name: String
    /// The declared type, without an outer optional.
    let baseType: String
    let isOptional: Bool
    let initializer: ExprSyntax?
    let kind: Kind
    let attributeArguments: LabeledExprListSyntax?
    /// The unlabeled options of `@Attribute` (`unique`, `externalStorage`, `preserveValueOnDeletion`).
    let attributeOptions: [String]
    let relationshipArguments: LabeledExprListSyntax?

    /// Whether the property is stored as an attribute (native or Codable), as opposed to a relationship.
    var isAttribute: Bool {
        switch kind {
        case .attribute, .codable: true
        default: false
        }
    }

    static let nativeTypes: Set<String> = [
        "String", "Bool", "Int", "Int16", "Int32", "Int64", "Double", "Float", "Decimal", "Date", "Data", "UUID", "URL",
    ].reduce(into: []) { set, name in
        set.insert(name)
        set.insert("Foundation.\(name)")
        set.insert("Swift.\(name)")
    }

    /// Whether a member is a stored instance `var` the macro should persist.
    static func isPersistable(_ variable: VariableDeclSyntax) -> Bool {
        guard variable.bindingSpecifier.tokenKind == .keyword(.var), variable.bindings.count == 1,
              let binding = variable.bindings.first, binding.accessorBlock == nil,
              binding.pattern.is(IdentifierPatternSyntax.self), binding.typeAnnotation != nil else { return false }
        let modifiers = variable.modifiers.map(\.name.text)
        if modifiers.contains("static") || modifiers.contains("class") || modifiers.contains("lazy") { return false }
        return !variable.attributes.contains { attribute(named: "Transient", in: $0) != nil }
    }

    static func attribute(named name: String, in element: AttributeListSyntax.Element) -> AttributeSyntax? {
        guard case .attribute(let attribute) = element else { return nil }
        let text = attribute.attributeName.trimmedDescription
        return text == name || text == "ObjectGraph.\(name)" ? attribute : nil
    }

    init?(_ variable: VariableDeclSyntax) {
        guard let binding = variable.bindings.first,
              let identifier = binding.pattern.as(IdentifierPatternSyntax.self),
              let type = binding.typeAnnotation?.type else { return nil }
        name = identifier.identifier.trimmedDescription
        initializer = binding.initializer?.value
        var unwrapped = type
        var optional = false
        var baseText: String?
        if let optionalType = type.as(OptionalTypeSyntax.self) {
            unwrapped = optionalType.wrappedType
            optional = true
        } else if let implicit = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
            unwrapped = implicit.wrappedType
            optional = true
        } else if let identifierType = type.as(IdentifierTypeSyntax.self), identifierType.name.text == "Optional",
                  let argument = identifierType.genericArgumentClause?.arguments.first {
            baseText = argument.argument.trimmedDescription
            optional = true
        }
        baseType = baseText ?? unwrapped.trimmedDescription
        isOptional = optional
        let relationshipAttribute = variable.attributes.lazy.compactMap { Self.attribute(named: "Relationship", in: $0) }.first
        let attributeAttribute = variable.attributes.lazy.compactMap { Self.attribute(named: "Attribute", in: $0) }.first
        attributeArguments = attributeAttribute?.arguments?.as(LabeledExprListSyntax.self)
        // SwiftData's unlabeled options: `@Attribute(.unique, .externalStorage)`.
        attributeOptions = (attributeArguments ?? []).compactMap { argument in
            guard argument.label == nil, let member = argument.expression.as(MemberAccessExprSyntax.self) else { return nil }
            return member.declName.baseName.text
        }
        relationshipArguments = relationshipAttribute?.arguments?.as(LabeledExprListSyntax.self)
        if relationshipAttribute != nil {
            if let array = unwrapped.as(ArrayTypeSyntax.self) {
                kind = .toManyArray(destination: array.element.trimmedDescription)
            } else if let generic = unwrapped.as(IdentifierTypeSyntax.self), generic.name.text == "Set",
                      let element = generic.genericArgumentClause?.arguments.first {
                kind = .toManySet(destination: element.argument.trimmedDescription)
            } else {
                kind = .toOne(destination: baseType)
            }
        } else {
            kind = Self.nativeTypes.contains(baseType) ? .attribute : .codable
        }
    }

    /// The inverse relationship's name, from `inverse: "name"` (or a key path's last component); "" for an explicit
    /// `inverse: nil` (a relationship without an inverse); nil when the argument is missing or unreadable.
    var inverseName: String? {
        guard let argument = relationshipArguments?.first(where: { $0.label?.text == "inverse" }) else { return nil }
        if argument.expression.is(NilLiteralExprSyntax.self) { return "" }
        if let literal = argument.expression.as(StringLiteralExprSyntax.self), let text = literal.representedLiteralValue {
            return text
        }
        if let keyPath = argument.expression.as(KeyPathExprSyntax.self),
           let last = keyPath.components.last?.component.as(KeyPathPropertyComponentSyntax.self) {
            return last.declName.baseName.text
        }
        return nil
    }
}
