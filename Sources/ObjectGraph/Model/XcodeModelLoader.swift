import Foundation
import PredicateFormat
#if canImport(FoundationXML)
import FoundationXML
#endif

extension Model {
    /// Loads an Xcode model: a `.xcdatamodeld` folder (the version its `.xccurrentversion` names, or its only
    /// version) or a single `.xcdatamodel`. Entities whose `representedClassName` names one of `classes` get
    /// instances of that class.
    ///
    /// ```swift
    /// let model = try Model(contentsOf: URL(fileURLWithPath: "Library.xcdatamodeld"), classes: [Book.self])
    /// ```
    ///
    /// - Throws: ``ObjectGraphError/invalidModelFile(path:element:reason:)`` naming the file and the element.
    public convenience init(contentsOf url: URL, classes: [any ManagedEntity.Type] = []) throws {
        let versionURL = try XcodeModelLoader.versionURL(url)
        let contents = versionURL.appendingPathComponent("contents")
        let file = try XcodeModelLoader.parse(contents)
        let byClassName = Dictionary(classes.map { (String(describing: $0), $0 as ManagedObject.Type) }) { first, _ in first }
        var mapped: [String: ManagedObject.Type] = [:]
        for description in file.entities {
            if let name = description.className, let type = byClassName[name] { mapped[description.name] = type }
        }
        var templates: [String: FetchRequestTemplate] = [:]
        for (name, template) in file.fetchRequestTemplates {
            do {
                templates[name] = FetchRequestTemplate(entityName: template.entity, predicate: try FormatPredicate(format: template.predicate, argumentArray: []))
            } catch {
                throw ObjectGraphError.invalidModelFile(path: contents.path, element: "fetch request \(name)", reason: "its predicate: \(error.description)")
            }
        }
        do {
            try self.init(
                entities: file.entities, classes: mapped, configurations: file.configurations, fetchRequestTemplates: templates, userInfo: file.userInfo)
        } catch let ObjectGraphError.invalidModel(entity, property, reason) {
            throw ObjectGraphError.invalidModelFile(
                path: contents.path, element: "entity \(entity)" + (property.map { ", property \($0)" } ?? ""), reason: reason)
        }
    }

    /// Finds `<name>.xcdatamodeld` (or `<name>.xcdatamodel`) in `directory` and loads it: the seeds' `registModelFileName`.
    public convenience init(xcodeModelNamed name: String, in directory: URL, classes: [any ManagedEntity.Type] = []) throws {
        for suffix in [".xcdatamodeld", ".xcdatamodel"] {
            let candidate = directory.appendingPathComponent(name + suffix)
            if FileManager.default.fileExists(atPath: candidate.path) {
                try self.init(contentsOf: candidate, classes: classes)
                return
            }
        }
        throw ObjectGraphError.invalidModelFile(path: directory.appendingPathComponent(name).path, element: "model",
                                                reason: "no \(name).xcdatamodeld or \(name).xcdatamodel in \(directory.path)")
    }
}

/// Reads Xcode's model formats.
enum XcodeModelLoader {
    static func versionURL(_ url: URL) throws -> URL {
        guard url.pathExtension == "xcdatamodeld" else { return url }
        // A bundle with its `contents` directly inside (no versions) is its own only version.
        if FileManager.default.fileExists(atPath: url.appendingPathComponent("contents").path) { return url }
        let marker = url.appendingPathComponent(".xccurrentversion")
        if FileManager.default.fileExists(atPath: marker.path) {
            let data = try Data(contentsOf: marker)
            guard let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any],
                  let name = plist["_XCCurrentVersionName"] as? String else {
                throw ObjectGraphError.invalidModelFile(path: marker.path, element: "_XCCurrentVersionName", reason: "the property list does not name the current version")
            }
            let version = url.appendingPathComponent(name)
            guard FileManager.default.fileExists(atPath: version.path) else {
                throw ObjectGraphError.invalidModelFile(path: marker.path, element: "_XCCurrentVersionName", reason: "it names \(name), which is not in the model")
            }
            return version
        }
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).filter { $0.hasSuffix(".xcdatamodel") }
        guard versions.count == 1 else {
            throw ObjectGraphError.invalidModelFile(path: url.path, element: ".xccurrentversion",
                                                    reason: "missing, and the model has \(versions.count) versions to choose from")
        }
        return url.appendingPathComponent(versions[0])
    }

    /// What a `contents` file declares.
    struct File {
        var entities: [EntityDescription]
        var configurations: [String: [String]]
        var fetchRequestTemplates: [String: (entity: String, predicate: String)]
        var userInfo: [String: String]
    }

    static func parse(_ contents: URL) throws -> File {
        guard let data = FileManager.default.contents(atPath: contents.path) else {
            throw ObjectGraphError.invalidModelFile(path: contents.path, element: "contents", reason: "the file cannot be read")
        }
        let reader = ModelXMLReader(path: contents.path)
        let parser = XMLParser(data: data)
        parser.delegate = reader
        if !parser.parse() || parser.parserError != nil || (reader.sawModel && !reader.closedModel && reader.failure == nil) {
            if let failure = reader.failure { throw failure }
            let found = reader.malformation
            let (line, column) = found.map { ($0.line, $0.column) } ?? (parser.lineNumber, parser.columnNumber)
            let open = found.map { $0.open } ?? reader.open.last
            let unclosed = open.map { "; <\($0.name)> opened on line \($0.line) is not closed" } ?? ""
            // libxml2's codes, which Foundation passes on: XML_ERR_TAG_NAME_MISMATCH and XML_ERR_DOCUMENT_END.
            let what = switch found?.code {
            case 76: "a closing tag does not match the open element"
            case 5, nil: "the file ends early"
            case let code?: "XML parser error \(code)"
            }
            throw ObjectGraphError.invalidModelFile(
                path: contents.path, element: "line \(line), column \(column)", reason: "malformed XML (\(what))\(unclosed)")
        }
        if let failure = reader.failure { throw failure }
        guard reader.sawModel else {
            throw ObjectGraphError.invalidModelFile(path: contents.path, element: "model", reason: "no <model> element")
        }
        // Xcode writes each relationship's inverse entity: it must be the entity that has the inverse.
        let byName = Dictionary(reader.entities.map { ($0.name, $0) }) { first, _ in first }
        for check in reader.inverseEntities {
            var owner = byName[check.inverseEntity]
            var steps = 0
            while let entity = owner, !entity.relationships.contains(where: { $0.name == check.inverse }), steps <= byName.count {
                owner = entity.parentName.flatMap { byName[$0] }
                steps += 1
            }
            guard owner != nil else {
                throw ObjectGraphError.invalidModelFile(
                    path: contents.path, element: "entity \(check.entity), relationship \(check.relationship)",
                    reason: "its inverseEntity \(check.inverseEntity) has no relationship '\(check.inverse)'")
            }
        }
        return File(entities: reader.entities, configurations: reader.configurations,
                    fetchRequestTemplates: reader.fetchRequestTemplates, userInfo: reader.userInfo)
    }
}

/// Collects entities from the XML of a `.xcdatamodel/contents` file.
///
/// Every element Xcode writes is read or refused by name; none is skipped without a word. Refused for now: spatial
/// (R-tree) indexes. Attributes of elements that only steer Xcode's code generation (`usesScalarValueType`,
/// `codeGenerationType`, `syncable`) change nothing.
final class ModelXMLReader: NSObject, XMLParserDelegate {
    let path: String
    var entities: [EntityDescription] = []
    var failure: ObjectGraphError?
    var sawModel = false
    var closedModel = false
    var userInfo: [String: String] = [:]
    var configurations: [String: [String]] = [:]
    var fetchRequestTemplates: [String: (entity: String, predicate: String)] = [:]
    /// The elements open at the parser's position, with the line each opened on: what a malformed file left open.
    private(set) var open: [(name: String, line: Int)] = []
    private var current: EntityDescription?
    /// Where a `userInfo` entry goes: the last attribute or relationship while one is open, else the entity, else
    /// the model.
    private enum Owner { case model, entity, attribute, relationship }
    private var owner: Owner = .model
    private var constraint: [String]?
    private var index: [String]?
    private var configuration: String?
    /// The fetched property whose fetch request comes next.
    private var fetchedProperty: String?
    /// Elements that only place entities in Xcode's diagram, or group others: nothing to keep.
    private static let layoutElements: Set<String> = ["elements", "element", "uniquenessConstraints", "userInfo", "compoundIndexes"]

    init(path: String) { self.path = path }

    private func fail(_ element: String, _ reason: String, _ parser: XMLParser) {
        guard failure == nil else { return }
        failure = .invalidModelFile(path: path, element: element, reason: reason)
        parser.abortParsing()
    }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String]) {
        guard failure == nil else { return }
        guard sawModel || name == "model" else { return fail("model", "no <model> element (the file starts with <\(name)>)", parser) }
        open.append((name, parser.lineNumber))
        let line = "line \(parser.lineNumber)"
        switch name {
        case "model":
            sawModel = true
        case "entity":
            guard let entityName = attributes["name"], !entityName.isEmpty else { return fail("entity at \(line)", "it has no name", parser) }
            var entity = EntityDescription(entityName, parent: attributes["parentEntity"], isAbstract: attributes["isAbstract"] == "YES",
                                           className: attributes["representedClassName"])
            entity.renamingIdentifier = attributes["elementID"] ?? attributes["renamingIdentifier"]
            entity.versionHashModifier = attributes["versionHashModifier"]
            current = entity
            owner = .entity
        case "attribute":
            guard let entity = current else { return fail("attribute at \(line)", "it is outside an entity", parser) }
            do {
                current?.attributes.append(try attribute(attributes, entity: entity.name))
                owner = .attribute
            } catch let error as ObjectGraphError {
                failure = error
                parser.abortParsing()
            } catch {
                fail("entity \(entity.name)", "\(error)", parser)
            }
        case "relationship":
            guard let entity = current else { return fail("relationship at \(line)", "it is outside an entity", parser) }
            let element = "entity \(entity.name), relationship \(attributes["name"] ?? "(unnamed)")"
            guard let relationshipName = attributes["name"] else { return fail(element, "it has no name", parser) }
            guard let destination = attributes["destinationEntity"] else { return fail(element, "it has no destinationEntity", parser) }
            // No inverse: Core Data accepts it with a warning, and so do we (see ``RelationshipDescription``).
            let inverse = attributes["inverseName"]
            if let inverse, let inverseEntity = attributes["inverseEntity"] { inverseEntities.append((entity.name, relationshipName, inverseEntity, inverse)) }
            let rules: [String: DeleteRule] = ["Nullify": .nullify, "Cascade": .cascade, "Deny": .deny, "No Action": .noAction]
            guard let rule = rules[attributes["deletionRule"] ?? "Nullify"] else {
                return fail(element, "unknown deletionRule '\(attributes["deletionRule"] ?? "")'", parser)
            }
            let toMany = attributes["toMany"] == "YES"
            var relationship = RelationshipDescription(
                relationshipName, destination: destination, inverse: inverse, isToMany: toMany, isOrdered: attributes["ordered"] == "YES",
                isOptional: attributes["optional"] == "YES", deleteRule: rule,
                minCount: toMany ? attributes["minCount"].flatMap(Int.init) : nil, maxCount: toMany ? attributes["maxCount"].flatMap(Int.init) : nil,
                isTransient: attributes["transient"] == "YES")
            relationship.renamingIdentifier = attributes["elementID"] ?? attributes["renamingIdentifier"]
            relationship.versionHashModifier = attributes["versionHashModifier"]
            current?.relationships.append(relationship)
            owner = .relationship
        case "entry":
            guard let key = attributes["key"] else { return fail("userInfo entry at \(line)", "it has no key", parser) }
            let value = attributes["value"] ?? ""
            guard var entity = current else {
                userInfo[key] = value
                return
            }
            switch owner {
            case .model: userInfo[key] = value
            case .entity: entity.userInfo[key] = value
            case .attribute: entity.attributes[entity.attributes.count - 1].userInfo[key] = value
            case .relationship: entity.relationships[entity.relationships.count - 1].userInfo[key] = value
            }
            current = entity
        case "uniquenessConstraint":
            constraint = []
        case "constraint":
            if let value = attributes["value"] { constraint?.append(value) }
        case "fetchIndex", "compoundIndex":
            index = []
        case "fetchIndexElement":
            let element = "entity \(current?.name ?? "?"), fetch index element at \(line)"
            if let type = attributes["type"], type != "Binary" {
                return fail(element, "\(type) indexes are not supported (only Binary ones)", parser)
            }
            guard let property = attributes["property"] ?? attributes["expression"] else { return fail(element, "it names no property", parser) }
            // A descending element is kept as a sort key writes it.
            index?.append(attributes["order"] == "descending" ? "-" + property : property)
        case "index":
            if let value = attributes["value"] { index?.append(value) }
        case "configuration":
            guard let configurationName = attributes["name"] else { return fail("configuration at \(line)", "it has no name", parser) }
            configuration = configurationName
            configurations[configurationName] = []
        case "memberEntity":
            if let configuration, let member = attributes["name"] { configurations[configuration, default: []].append(member) }
        case "fetchRequest":
            if let property = fetchedProperty {
                // A fetched property's own request: what it fetches.
                guard let entity = attributes["entity"] else {
                    return fail("entity \(current?.name ?? "?"), fetched property \(property)", "its fetch request names no entity", parser)
                }
                current?.fetchedProperties.append(FetchedPropertyDescription(property, entity: entity, predicate: attributes["predicateString"] ?? "TRUEPREDICATE"))
                return
            }
            guard let templateName = attributes["name"], let entity = attributes["entity"] else {
                return fail("fetch request at \(line)", "a fetch request template needs a name and an entity", parser)
            }
            fetchRequestTemplates[templateName] = (entity, attributes["predicateString"] ?? "TRUEPREDICATE")
        case "fetchedProperty":
            guard current != nil, let propertyName = attributes["name"] else {
                return fail("fetched property at \(line)", "it needs a name and an entity around it", parser)
            }
            fetchedProperty = propertyName
        default:
            guard Self.layoutElements.contains(name) else {
                return fail("<\(name)> at \(line)", "this element is not one Xcode's model editor writes, or not one this release reads", parser)
            }
        }
    }

    /// Where the XML first went wrong, with the element open there (libxml2 closes it before the parse ends).
    private(set) var malformation: (line: Int, column: Int, code: Int, open: (name: String, line: Int)?)?

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        guard malformation == nil else { return }
        malformation = (parser.lineNumber, parser.columnNumber, (parseError as NSError).code, open.last)
    }

    /// Relationships that name their inverse's entity, checked once every entity is read.
    var inverseEntities: [(entity: String, relationship: String, inverseEntity: String, inverse: String)] = []

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        if !open.isEmpty { open.removeLast() }
        switch name {
        case "model":
            closedModel = true
        case "entity":
            if let entity = current { entities.append(entity) }
            current = nil
            owner = .model
        case "attribute", "relationship":
            owner = .entity
        case "uniquenessConstraint":
            if let keys = constraint, !keys.isEmpty { current?.uniquenessConstraints.append(keys) }
            constraint = nil
        case "fetchIndex", "compoundIndex":
            if let keys = index, !keys.isEmpty { current?.indexes.append(keys) }
            index = nil
        case "configuration":
            configuration = nil
        case "fetchedProperty":
            fetchedProperty = nil
        default:
            break
        }
    }

    private func attribute(_ xml: [String: String], entity: String) throws -> AttributeDescription {
        let name = xml["name"] ?? ""
        let element = "entity \(entity), attribute \(name.isEmpty ? "(unnamed)" : name)"
        func fail(_ reason: String) -> ObjectGraphError { .invalidModelFile(path: path, element: element, reason: reason) }
        guard !name.isEmpty else { throw fail("it has no name") }
        let types: [String: AttributeType] = [
            "String": .string, "Boolean": .bool, "Integer 16": .int16, "Integer 32": .int32, "Integer 64": .int64, "Double": .double,
            "Float": .float, "Decimal": .decimal, "Date": .date, "Binary": .binary, "UUID": .uuid, "URI": .uri,
        ]
        let typeName = xml["attributeType"] ?? ""
        let type: AttributeType
        if typeName == "Transformable" {
            type = .codable(typeName: xml["customClassName"] ?? "Transformable")
        } else if let known = types[typeName] {
            type = known
        } else if typeName.isEmpty || typeName == "Undefined" {
            // Core Data's Undefined: Xcode writes no attributeType, and allows it on a transient attribute only.
            guard xml["transient"] == "YES" else {
                throw fail("it has no attributeType (Undefined), which Core Data allows on a transient attribute only: give it a type or make it transient")
            }
            type = .undefined
        } else {
            throw fail("unknown attributeType '\(typeName)'")
        }
        var attribute = AttributeDescription(
            name, type, isOptional: xml["optional"] == "YES", isIndexed: xml["indexed"] == "YES", isTransient: xml["transient"] == "YES")
        attribute.renamingIdentifier = xml["elementID"] ?? xml["renamingIdentifier"]
        attribute.versionHashModifier = xml["versionHashModifier"]
        attribute.preservesValueInHistoryOnDeletion = xml["preserveAfterDeletion"] == "YES"
        attribute.allowsExternalBinaryDataStorage = xml["allowsExternalBinaryDataStorage"] == "YES"
        if xml["derived"] == "YES" {
            guard let expression = xml["derivationExpression"], !expression.isEmpty else { throw fail("it is derived but has no derivationExpression") }
            attribute.derivation = expression
        }
        // Kept on any attribute, as Xcode leaves it after a type change (a String with NSStringTransformer): only a
        // transformable attribute's values go through it, as Core Data ignores it elsewhere.
        attribute.valueTransformerName = xml["valueTransformerName"]
        for (key, assign) in [("minDateTimeInterval", true), ("maxDateTimeInterval", false)] {
            guard let text = xml[key] else { continue }
            guard type == .date, let seconds = Double(text) else { throw fail("\(key) '\(text)' needs a Date attribute and a number") }
            if assign { attribute.minValue = seconds } else { attribute.maxValue = seconds }
        }
        let isNumeric = [.int16, .int32, .int64, .double, .float, .decimal].contains(type)
        for (key, assign) in [("minValueString", true), ("maxValueString", false)] {
            guard let text = xml[key] else { continue }
            guard let number = Double(text) else { throw fail("\(key) '\(text)' is not a number") }
            if isNumeric {
                if assign { attribute.minValue = number } else { attribute.maxValue = number }
            } else {
                if assign { attribute.minLength = Int(number) } else { attribute.maxLength = Int(number) }
            }
        }
        attribute.pattern = xml["regularExpressionString"]
        if let text = xml["defaultValueString"] {
            // Numbers and Booleans are read as Core Data reads them, with NSString's `integerValue`, `doubleValue`
            // and `boolValue`: Xcode leaves "0.0" on an Integer or a Boolean, and "NO" on an Integer, after a type
            // change, and Core Data takes both as 0 (false).
            let value: AttributeValue? = switch type {
            case .string: .string(text)
            case .bool: .bool(NSString(string: text).boolValue)
            case .int16, .int32, .int64: .int(NSString(string: text).longLongValue)
            case .double, .float: .double(NSString(string: text).doubleValue)
            case .decimal: Decimal(string: text).map(AttributeValue.decimal)
            case .uuid: UUID(uuidString: text).map(AttributeValue.uuid)
            case .uri: URL(string: text).map(AttributeValue.url)
            default: nil
            }
            guard let value else { throw fail("defaultValueString '\(text)' does not fit type \(type.name)") }
            attribute.defaultValue = value
        }
        if let interval = xml["defaultDateTimeInterval"] {
            guard type == .date, let seconds = Double(interval) else { throw fail("defaultDateTimeInterval '\(interval)' needs a Date attribute and a number") }
            attribute.defaultValue = .date(Date(timeIntervalSinceReferenceDate: seconds))
        }
        return attribute
    }
}
