import SpokesCLI

await SpokesTool.main(kinds: [])
