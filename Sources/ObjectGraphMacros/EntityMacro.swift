import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Entity`: turns a `ManagedObject` subclass with stored properties into a managed entity.
///
/// It marks each stored `var` with `@_PersistedProperty` (typed accessors backed by the object's storage), adds the
/// entity description derived from the declaration and a key-path-to-name map, and conforms the class to
/// `ManagedEntity`.
public struct EntityMacro: MemberMacro, MemberAttributeMacro, ExtensionMacro {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func classDecl(_ declaration: some DeclGroupSyntax) throws -> ClassDeclSyntax {
        guard let classDecl = declaration.as(ClassDeclSyntax.self) else {
            throw Failure(description: "@Entity applies to a class that inherits from ManagedObject")
        }
        return classDecl
    }

    /// The superclass, when it is another entity rather than `ManagedObject` itself.
    static func parentName(_ classDecl: ClassDeclSyntax) throws -> String? {
        guard let first = classDecl.inheritanceClause?.inheritedTypes.first?.type.trimmedDescription else {
            throw Failure(description: "@Entity class \(classDecl.name.text) must inherit from ManagedObject (or another @Entity class)")
        }
        return first == "ManagedObject" || first == "ObjectGraph.ManagedObject" ? nil : first
    }

    static func argument(_ node: AttributeSyntax, _ label: String) -> ExprSyntax? {
        node.arguments?.as(LabeledExprListSyntax.self)?.first { $0.label?.text == label }?.expression
    }

    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax, providingAttributesFor member: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AttributeSyntax] {
        guard let variable = member.as(VariableDeclSyntax.self), PropertyShape.isPersistable(variable) else { return [] }
        // A root entity's attributes and relationships sit in declaration order, so the macro can tell each
        // accessor its index among its kind; a sub-entity's come after inherited ones the macro cannot count, so its
        // accessors look names up.
        guard let classDecl = declaration.as(ClassDeclSyntax.self), (try? parentName(classDecl)) == .some(nil),
              let shape = PropertyShape(variable) else {
            return ["@ObjectGraph._PersistedProperty"]
        }
        let sameKind = classDecl.memberBlock.members.compactMap { $0.decl.as(VariableDeclSyntax.self) }
            .filter(PropertyShape.isPersistable).compactMap(PropertyShape.init).filter { $0.isAttribute == shape.isAttribute }
        guard let position = sameKind.firstIndex(where: { $0.name == shape.name }) else { return ["@ObjectGraph._PersistedProperty"] }
        return ["@ObjectGraph._PersistedProperty(position: \(raw: position))"]
    }

    public static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax, conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        let classDecl = try classDecl(declaration)
        let className = classDecl.name.text
        let parent = try parentName(classDecl)
        let shapes = classDecl.memberBlock.members.compactMap { $0.decl.as(VariableDeclSyntax.self) }
            .filter(PropertyShape.isPersistable).compactMap(PropertyShape.init)
        var attributes: [String] = []
        var relationships: [String] = []
        // SwiftData's `@Attribute(.unique)`, `#Unique` and `#Index` join the entity's constraints and indexes.
        var uniqueKeys: [[String]] = []
        var indexKeys: [[String]] = []
        for shape in shapes {
            switch shape.kind {
            case .attribute, .codable:
                attributes.append(attributeDescription(shape))
                if shape.attributeOptions.contains("unique") { uniqueKeys.append([shape.name]) }
            case .toOne(let destination), .toManySet(let destination), .toManyArray(let destination):
                guard let inverse = shape.inverseName else {
                    context.diagnose(Diagnostic(node: node, message: MacroMessage(
                        "\(className).\(shape.name): @Relationship needs inverse: \"<name of the \(destination) property>\"")))
                    continue
                }
                let inverseText = inverse.isEmpty ? "nil" : literal(inverse)
                var text = "ObjectGraph.RelationshipDescription(\(literal(shape.name)), destination: \(literal(destination)), inverse: \(inverseText)"
                switch shape.kind {
                case .toManySet: text += ", isToMany: true"
                case .toManyArray: text += ", isToMany: true, isOrdered: true"
                default: break
                }
                // In the initializer's order, whatever the order written (defaulted arguments must keep theirs).
                let order = ["isOptional", "deleteRule", "minCount", "maxCount", "originalName", "isTransient"]
                let arguments = (shape.relationshipArguments ?? []).filter { $0.label?.text != "inverse" }
                for argument in arguments.sorted(by: { (order.firstIndex(of: $0.label!.text) ?? 0) < (order.firstIndex(of: $1.label!.text) ?? 0) }) {
                    text += ", \(argument.label!.text): \(argument.expression.trimmedDescription)"
                }
                relationships.append(text + ")")
            }
        }
        for member in classDecl.memberBlock.members {
            guard let expansion = member.decl.as(MacroExpansionDeclSyntax.self) else { continue }
            let groups = expansion.arguments.compactMap { keyPathNames($0.expression) }
            switch expansion.macroName.text {
            case "Unique": uniqueKeys += groups
            case "Index": indexKeys += groups
            default: break
            }
        }
        var entityArguments = [literal(className)]
        entityArguments.append("attributes: [\(attributes.joined(separator: ",\n    "))]")
        entityArguments.append("relationships: [\(relationships.joined(separator: ",\n    "))]")
        if let parent { entityArguments.append("parent: \(literal(parent))") }
        if let value = argument(node, "isAbstract") { entityArguments.append("isAbstract: \(value.trimmedDescription)") }
        for (label, added) in [("uniquenessConstraints", uniqueKeys), ("indexes", indexKeys)] {
            let addedText = "[\(added.map { "[\($0.map(literal).joined(separator: ", "))]" }.joined(separator: ", "))]"
            switch (argument(node, label), added.isEmpty) {
            case (let value?, true): entityArguments.append("\(label): \(value.trimmedDescription)")
            case (let value?, false): entityArguments.append("\(label): (\(value.trimmedDescription)) + \(addedText)")
            case (nil, false): entityArguments.append("\(label): \(addedText)")
            case (nil, true): break
            }
        }
        entityArguments.append("className: \(literal(className))")
        let override = parent == nil ? "" : "override "
        // Key paths are rooted at a generic subclass T, so a sub-entity's map holds its inherited properties
        // rooted at itself (`\Novel.title`, not `\Work.title`).
        let keyPaths = shapes.map { "\\T.\($0.name): \(literal($0.name))" }
        let inherited = parent.map { "_keyPathNames_\($0)(for: type)" } ?? "[:]"
        let keyPathLiteral = keyPaths.isEmpty ? "[:]" : "[\(keyPaths.joined(separator: ", "))]"
        // A class with initializers of its own (SwiftData's `init(title:)`, calling `super.init()`) no longer inherits
        // the initializer contexts make objects with: it is given here, unless the class wrote it.
        let initializers = classDecl.memberBlock.members.compactMap { $0.decl.as(InitializerDeclSyntax.self) }
        let writesDesignated = initializers.contains { !$0.modifiers.contains { $0.name.text == "convenience" } }
        let writesContextInit = initializers.contains { initializer in
            initializer.signature.parameterClause.parameters.map(\.firstName.text) == ["entity", "objectID"]
        }
        var contextInit: [DeclSyntax] = []
        if writesDesignated && !writesContextInit {
            contextInit.append(
                """
                /// Creates an object for a context; contexts call this.
                public required init(entity: ObjectGraph.ModelEntity, objectID: ObjectGraph.ObjectID) {
                    super.init(entity: entity, objectID: objectID)
                }
                """)
        }
        // Any mention of the hook in the body counts as an override (an override cannot sit in an extension); an
        // ancestor's answer is asked of the ancestor's own class, and any other class asking answers true.
        let mentionsValueValidation = classDecl.memberBlock.tokens(viewMode: .sourceAccurate).contains {
            $0.tokenKind == .identifier("validateValue")
        }
        let mayValidateValues = mentionsValueValidation
            ? ["true"] : ["type != \(className).self"] + (parent.map { ["super._mayValidateValues(\($0).self)"] } ?? [])
        return contextInit + [
            """
            /// The entity this class represents, derived from its declaration by `@Entity`.
            public \(raw: override)class var entityDescription: ObjectGraph.EntityDescription {
                ObjectGraph.EntityDescription(\(raw: entityArguments.joined(separator: ",\n")))
            }
            """,
            """
            /// The name of the entity this class represents.
            public \(raw: override)class var entityName: String { \(raw: literal(className)) }
            """,
            """
            /// Whether instances of `type` may validate values themselves, as `@Entity` read this class's body.
            public override class func _mayValidateValues(_ type: AnyClass) -> Bool {
                \(raw: mayValidateValues.joined(separator: " || "))
            }
            """,
            """
            /// The persisted properties' key paths and names, for typed queries.
            public \(raw: override)class var _keyPathNames: [AnyKeyPath: String] {
                _keyPathNames_\(raw: className)(for: self)
            }
            """,
            """
            /// The persisted properties of this class and its ancestors, as key paths rooted at `T`.
            public class func _keyPathNames_\(raw: className)<T: \(raw: className)>(for type: T.Type) -> [AnyKeyPath: String] {
                \(raw: inherited).merging(\(raw: keyPathLiteral) as [AnyKeyPath: String]) { _, own in own }
            }
            """,
        ]
    }

    static func attributeDescription(_ shape: PropertyShape) -> String {
        let typeExpression: String
        let defaultExpression: String
        let optionalType = "(\(shape.baseType))?"
        switch shape.kind {
        case .codable:
            typeExpression = "ObjectGraph.AttributeType.codable(typeName: \(literal(shape.baseType)))"
            defaultExpression = shape.initializer.map { "ObjectGraph._defaultCodableValue(\($0.trimmedDescription) as \(optionalType))" } ?? ".null"
        default:
            typeExpression = "ObjectGraph._attributeType(\(shape.baseType).self)"
            defaultExpression = shape.initializer.map { "ObjectGraph._defaultAttributeValue(\($0.trimmedDescription) as \(optionalType))" } ?? ".null"
        }
        var text = "ObjectGraph.AttributeDescription(\(literal(shape.name)), \(typeExpression), isOptional: \(shape.isOptional), defaultValue: \(defaultExpression)"
        for argument in shape.attributeArguments ?? [] {
            guard let label = argument.label?.text else { continue }
            text += ", \(label): \(argument.expression.trimmedDescription)"
        }
        text += ")"
        // The options a description's initializer does not take are set on it (`.unique` is the entity's).
        let options = shape.attributeOptions.filter { $0 != "unique" }
        guard !options.isEmpty else { return text }
        return "ObjectGraph._withOptions([\(options.map { ".\($0)" }.joined(separator: ", "))], \(text))"
    }

    /// The property names of a key path array literal (`[\.isbn, \.title]`), as `#Unique` and `#Index` list them.
    static func keyPathNames(_ expression: ExprSyntax) -> [String]? {
        guard let array = expression.as(ArrayExprSyntax.self) else { return nil }
        let names = array.elements.compactMap { element -> String? in
            guard let keyPath = element.expression.as(KeyPathExprSyntax.self), keyPath.components.count == 1,
                  let property = keyPath.components.first?.component.as(KeyPathPropertyComponentSyntax.self) else { return nil }
            return property.declName.baseName.text
        }
        return names.count == array.elements.count ? names : nil
    }

    static func literal(_ text: String) -> String {
        StringLiteralExprSyntax(content: text).description
    }

    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax, providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        // The member role reports a declaration @Entity cannot apply to; saying it twice helps nobody.
        guard let classDecl = declaration.as(ClassDeclSyntax.self), classDecl.inheritanceClause != nil else { return [] }
        // A sub-entity inherits the conformance from its parent class.
        guard try parentName(classDecl) == nil, !protocols.isEmpty else { return [] }
        return [try ExtensionDeclSyntax("extension \(type.trimmed): ObjectGraph.ManagedEntity {}")]
    }
}

struct MacroMessage: DiagnosticMessage {
    let message: String
    var diagnosticID: MessageID { MessageID(domain: "ObjectGraphMacros", id: "entity") }
    var severity: DiagnosticSeverity { .error }

    init(_ message: String) { self.message = message }
}

/// `@_PersistedProperty`: replaces a stored property's storage with typed accessors on the object's values.
public struct PersistedPropertyMacro: AccessorMacro {
    public static func expansion(
        of node: AttributeSyntax, providingAccessorsOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let variable = declaration.as(VariableDeclSyntax.self), let shape = PropertyShape(variable) else { return [] }
        let key = EntityMacro.literal(shape.name)
        let position = EntityMacro.argument(node, "position").map { ", at: \($0.trimmedDescription)" } ?? ""
        let getter: String
        let setter: String
        let typeArgument = shape.isOptional ? "(\(shape.baseType))?.self" : "\(shape.baseType).self"
        switch shape.kind {
        case .attribute:
            getter = "_attribute(\(key)\(position), as: \(typeArgument))"
            setter = "_setAttribute(newValue, forKey: \(key)\(position))"
        case .codable:
            getter = "_codable(\(key), as: \(typeArgument))"
            setter = "_setCodable(newValue, forKey: \(key))"
        case .toOne(let destination):
            getter = "_toOne(\(key)\(position), as: \(destination).self)"
            setter = "_setToOne(newValue, forKey: \(key))"
        case .toManySet(let destination):
            getter = "Set(_toMany(\(key)\(position), as: \(destination).self))"
            setter = "_setToMany(newValue, forKey: \(key))"
        case .toManyArray(let destination):
            getter = "_toMany(\(key)\(position), as: \(destination).self)"
            setter = "_setToMany(newValue, forKey: \(key))"
        }
        var accessors: [AccessorDeclSyntax] = []
        if shape.initializer != nil {
            // The initial value lives in the entity description; the accessor only lets the declaration keep it.
            accessors.append("init(initialValue) {}")
        }
        accessors.append("get { \(raw: getter) }")
        accessors.append("set { \(raw: setter) }")
        return accessors
    }
}

/// `#Unique` and `#Index`: markers that `@Entity` reads in the class body; they expand to nothing.
public struct SchemaMarkerMacro: DeclarationMacro {
    public static func expansion(of node: some FreestandingMacroExpansionSyntax, in context: some MacroExpansionContext) throws -> [DeclSyntax] {
        []
    }
}

/// `@Attribute`, `@Relationship` and `@Transient`: markers that `@Entity` reads; they expand to nothing.
public struct MarkerMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        []
    }
}
