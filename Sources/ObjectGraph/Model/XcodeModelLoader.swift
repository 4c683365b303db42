import Foundation
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
        let descriptions = try XcodeModelLoader.parse(contents)
        let byClassName = Dictionary(classes.map { (String(describing: $0), $0 as ManagedObject.Type) }) { first, _ in first }
        var mapped: [String: ManagedObject.Type] = [:]
        for description in descriptions {
            if let name = description.className, let type = byClassName[name] { mapped[description.name] = type }
        }
        do {
            try self.init(entities: descriptions, classes: mapped)
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

    static func parse(_ contents: URL) throws -> [EntityDescription] {
        guard let data = FileManager.default.contents(atPath: contents.path) else {
            throw ObjectGraphError.invalidModelFile(path: contents.path, element: "contents", reason: "the file cannot be read")
        }
        let reader = ModelXMLReader(path: contents.path)
        let parser = XMLParser(data: data)
        parser.delegate = reader
        if !parser.parse() || parser.parserError != nil || (reader.sawModel && !reader.closedModel && reader.failure == nil) {
            if let failure = reader.failure { throw failure }
            throw ObjectGraphError.invalidModelFile(
                path: contents.path, element: "line \(parser.lineNumber)",
                reason: "malformed XML (\(parser.parserError.map { "\($0)" } ?? "unknown error"))")
        }
        if let failure = reader.failure { throw failure }
        guard reader.sawModel else {
            throw ObjectGraphError.invalidModelFile(path: contents.path, element: "model", reason: "no <model> element")
        }
        return reader.entities
    }
}

/// Collects entities from the XML of a `.xcdatamodel/contents` file.
final class ModelXMLReader: NSObject, XMLParserDelegate {
    let path: String
    var entities: [EntityDescription] = []
    var failure: ObjectGraphError?
    var sawModel = false
    var closedModel = false
    private var current: EntityDescription?
    private var constraint: [String]?
    private var index: [String]?

    init(path: String) { self.path = path }

    private func fail(_ element: String, _ reason: String, _ parser: XMLParser) {
        guard failure == nil else { return }
        failure = .invalidModelFile(path: path, element: element, reason: reason)
        parser.abortParsing()
    }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String]) {
        guard failure == nil else { return }
        switch name {
        case "model":
            sawModel = true
        case "entity":
            guard let entityName = attributes["name"], !entityName.isEmpty else { return fail("entity at line \(parser.lineNumber)", "it has no name", parser) }
            current = EntityDescription(entityName, parent: attributes["parentEntity"], isAbstract: attributes["isAbstract"] == "YES",
                                        className: attributes["representedClassName"])
        case "attribute":
            guard let entity = current else { return fail("attribute at line \(parser.lineNumber)", "it is outside an entity", parser) }
            guard attributes["transient"] != "YES" else { return }
            do {
                current?.attributes.append(try attribute(attributes, entity: entity.name))
            } catch let error as ObjectGraphError {
                failure = error
                parser.abortParsing()
            } catch {
                fail("entity \(entity.name)", "\(error)", parser)
            }
        case "relationship":
            guard let entity = current else { return fail("relationship at line \(parser.lineNumber)", "it is outside an entity", parser) }
            let element = "entity \(entity.name), relationship \(attributes["name"] ?? "(unnamed)")"
            guard let relationshipName = attributes["name"] else { return fail(element, "it has no name", parser) }
            guard let destination = attributes["destinationEntity"] else { return fail(element, "it has no destinationEntity", parser) }
            guard let inverse = attributes["inverseName"] else { return fail(element, "it has no inverseName (every relationship needs an inverse)", parser) }
            let rules: [String: DeleteRule] = ["Nullify": .nullify, "Cascade": .cascade, "Deny": .deny, "No Action": .noAction]
            guard let rule = rules[attributes["deletionRule"] ?? "Nullify"] else {
                return fail(element, "unknown deletionRule '\(attributes["deletionRule"] ?? "")'", parser)
            }
            let toMany = attributes["toMany"] == "YES"
            current?.relationships.append(RelationshipDescription(
                relationshipName, destination: destination, inverse: inverse, isToMany: toMany, isOrdered: attributes["ordered"] == "YES",
                isOptional: attributes["optional"] == "YES", deleteRule: rule,
                minCount: toMany ? attributes["minCount"].flatMap(Int.init) : nil, maxCount: toMany ? attributes["maxCount"].flatMap(Int.init) : nil))
        case "uniquenessConstraint":
            constraint = []
        case "constraint":
            if let value = attributes["value"] { constraint?.append(value) }
        case "fetchIndex":
            index = []
        case "fetchIndexElement":
            if let property = attributes["property"] { index?.append(property) }
        default:
            break
        }
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        switch name {
        case "model":
            closedModel = true
        case "entity":
            if let entity = current { entities.append(entity) }
            current = nil
        case "uniquenessConstraint":
            if let keys = constraint, !keys.isEmpty { current?.uniquenessConstraints.append(keys) }
            constraint = nil
        case "fetchIndex":
            if let keys = index, !keys.isEmpty { current?.indexes.append(keys) }
            index = nil
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
        } else {
            throw fail("unknown attributeType '\(typeName)'")
        }
        var attribute = AttributeDescription(name, type, isOptional: xml["optional"] == "YES", isIndexed: xml["indexed"] == "YES")
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
            let value: AttributeValue? = switch type {
            case .string: .string(text)
            case .bool: ["YES": true, "NO": false, "1": true, "0": false][text].map(AttributeValue.bool)
            case .int16, .int32, .int64: Int64(text).map(AttributeValue.int)
            case .double, .float: Double(text).map(AttributeValue.double)
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
