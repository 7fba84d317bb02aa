import Testing
@testable import SpokesCLI

@Suite struct OptionTests {
    static let users = Option.integer("users", "U", in: 1...100, default: 10, help: "How many users.")
    static let seed = Option.integer("seed", "N", in: 0...1_000, help: "A seed.")
    static let scale = Option.number("scale", "X", in: 0...10, default: 1, help: "A scale.")
    static let deadline = Option.number("deadline", "SECONDS", in: 0.001...86_400, help: "A deadline.", defaultText: "the node's")
    static let name = Option.string("name", "NAME", help: "A name.")
    static let peers = Option.repeated("peer", "HOST:PORT", help: "A peer.")
    static let json = Option.flag("json", help: "Print JSON.")
    static let spec = CommandSpec(name: "go", abstract: "Go.", options: [users, seed, scale, deadline, name, peers, json])
        .retiring("old", "it is called --new now")

    func parse(_ arguments: String...) throws(UsageError) -> ParsedArguments {
        guard case .run(let parsed) = try ArgumentParser.parse(arguments, as: Self.spec, toolName: "tool") else {
            throw UsageError("asked for help")
        }
        return parsed
    }

    @Test func readsTypedValuesThroughTheirDeclaration() throws {
        let parsed = try parse("--users", "5", "--seed=7", "--scale", "2.5", "--name", "n", "--peer", "a", "--peer", "b", "--json")
        #expect(try parsed.value(Self.users) == 5)
        #expect(try parsed.value(Self.seed) == 7)
        #expect(try parsed.value(Self.scale) == 2.5)
        #expect(try parsed.value(Self.name) == "n")
        #expect(try parsed.value(Self.peers) == ["a", "b"])
        #expect(try parsed.value(Self.json))
        #expect(parsed.isSet(Self.users) && !parsed.isSet(Self.deadline))
    }

    @Test func defaultsWhenNotGiven() throws {
        let parsed = try parse()
        #expect(try parsed.value(Self.users) == 10)
        #expect(try parsed.value(Self.scale) == 1)
        #expect(try parsed.value(Self.seed) == nil)
        #expect(try parsed.value(Self.deadline) == nil)
        #expect(try parsed.value(Self.peers) == [])
        #expect(try !parsed.value(Self.json))
        #expect(!parsed.isSet(Self.users), "a default is not an explicit setting")
    }

    @Test(arguments: ["1e21", "inf", "-inf", "nan", "-1", "0x10", "1,5", "", "101", "0"])
    func refusesWhatIsNotAnIntegerInItsRange(text: String) throws {
        let parsed = try parse("--users=\(text)")
        #expect(throws: UsageError.self) { try parsed.value(Self.users) }
        do {
            _ = try parsed.value(Self.users)
        } catch {
            #expect(error.message.hasPrefix("--users "), "\(error.message)")
            #expect(error.message.contains("1 to 100"), "the range is named: \(error.message)")
        }
    }

    @Test(arguments: ["1e21", "inf", "nan", "-1", "0x10", "0", "86401", "1e5"])
    func refusesWhatIsNotAFiniteNumberInItsRange(text: String) throws {
        let parsed = try parse("--deadline=\(text)")
        #expect(throws: UsageError.self) { try parsed.value(Self.deadline) }
        do {
            _ = try parsed.value(Self.deadline)
        } catch {
            #expect(error.message.hasPrefix("--deadline "), "\(error.message)")
            #expect(error.message.contains("0.001 to 86400"), "\(error.message)")
        }
    }

    @Test func helpStatesEveryRangeAndDefault() {
        let help = ArgumentParser.helpText(for: Self.spec, toolName: "tool")
        #expect(help.contains("How many users. (1 to 100; default: 10)"), "\(help)")
        #expect(help.contains("A seed. (0 to 1000)"))
        #expect(help.contains("A deadline. (0.001 to 86400; default: the node's)"))
        #expect(help.contains("--peer <HOST:PORT> ..."))
    }

    @Test func aRetiredOptionSaysWhatToUseInstead() {
        #expect(throws: UsageError("--old: it is called --new now")) { try parse("--old", "x") }
    }
}
