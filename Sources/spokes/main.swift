import Foundation
import SpokesCLI

exit(await SpokesTool.main(Array(CommandLine.arguments.dropFirst())))
