import Foundation
import Testing
@testable import SpokesDashboard

@Suite struct MapProjectionTests {
    typealias Coordinates = [(latitude: Double, longitude: Double)]

    func isInside(_ point: MapProjection.Point, width: Double, height: Double, margin: Double) -> Bool {
        point.x >= margin - 1e-9 && point.x <= width - margin + 1e-9 && point.y >= margin - 1e-9 && point.y <= height - margin + 1e-9
    }

    @Test func fitsEveryStationInsideTheMargins() {
        let places: Coordinates = [(45.40, 9.10), (45.52, 9.25), (45.47, 9.19), (45.43, 9.22)]
        let projection = MapProjection(coordinates: places, width: 400, height: 300, margin: 10)
        for place in places {
            #expect(isInside(projection.project(latitude: place.latitude, longitude: place.longitude), width: 400, height: 300, margin: 10))
        }
    }

    @Test func touchesTheMarginOnTheLimitingAxisAndCentresTheOther() {
        // 0.2 degrees of latitude by 0.1 of longitude at the equator: taller than wide.
        let projection = MapProjection(coordinates: [(0, 0), (0.2, 0.1)], width: 400, height: 300, margin: 10)
        let south = projection.project(latitude: 0, longitude: 0)
        let north = projection.project(latitude: 0.2, longitude: 0.1)
        #expect(abs(south.y - 290) < 1e-9 && abs(north.y - 10) < 1e-9)
        #expect(abs((south.x + north.x) / 2 - 200) < 1e-9)
        #expect(abs((north.x - south.x) - 140) < 0.01)
    }

    @Test func northIsUp() {
        let projection = MapProjection(coordinates: [(45, 9), (46, 9)], width: 100, height: 100, margin: 0)
        #expect(projection.project(latitude: 46, longitude: 9).y < projection.project(latitude: 45, longitude: 9).y)
    }

    @Test func scalesLongitudeByTheCosineOfTheMeanLatitude() {
        // At 60° a degree of longitude is half a degree of latitude on the ground.
        let projection = MapProjection(coordinates: [(59.5, 10), (60.5, 11)], width: 1000, height: 1000, margin: 0)
        let a = projection.project(latitude: 59.5, longitude: 10)
        let b = projection.project(latitude: 60.5, longitude: 11)
        let ratio = abs(b.x - a.x) / abs(b.y - a.y)
        #expect(abs(ratio - cos(60 * Double.pi / 180)) < 0.001)
    }

    @Test func putsASingleStationInTheMiddle() {
        let projection = MapProjection(coordinates: [(45.46, 9.19)], width: 300, height: 200, margin: 10)
        #expect(projection.project(latitude: 45.46, longitude: 9.19) == .init(x: 150, y: 100))
        #expect(projection.unitsPerKilometre == 0)
    }

    @Test func putsStationsAtOnePointInTheMiddle() {
        let projection = MapProjection(coordinates: Array(repeating: (45.46, 9.19), count: 5), width: 300, height: 200, margin: 10)
        #expect(projection.project(latitude: 45.46, longitude: 9.19) == .init(x: 150, y: 100))
    }

    @Test func spreadsStationsOnOneMeridianAlongTheVerticalOnly() {
        let projection = MapProjection(coordinates: [(45, 9), (46, 9)], width: 300, height: 200, margin: 10)
        let south = projection.project(latitude: 45, longitude: 9)
        #expect(south.x == 150)
        #expect(abs(south.y - 190) < 1e-9)
    }

    @Test func neverProducesNaNFromBadCoordinatesOrBoxes() {
        let projection = MapProjection(
            coordinates: [(.nan, 9), (45, .infinity), (45.4, 9.1), (45.5, 9.2)], width: 300, height: 200, margin: 10)
        let bad = projection.project(latitude: .nan, longitude: 9)
        #expect(bad == .init(x: 150, y: 100))
        let degenerate = MapProjection(coordinates: [(45.4, 9.1), (45.5, 9.2)], width: .nan, height: -5, margin: .infinity)
        let point = degenerate.project(latitude: 45.4, longitude: 9.1)
        #expect(point.x.isFinite && point.y.isFinite)
        let empty = MapProjection(coordinates: [], width: 300, height: 200, margin: 10)
        #expect(empty.project(latitude: 45, longitude: 9) == .init(x: 150, y: 100))
    }

    @Test func staysFiniteAtThePole() {
        let projection = MapProjection(coordinates: [(90, 0), (89.9, 90)], width: 300, height: 200, margin: 10)
        let point = projection.project(latitude: 90, longitude: 0)
        #expect(point.x.isFinite && point.y.isFinite)
    }

    @Test func aspectRatioFollowsTheProjectedExtentWithinItsRange() {
        #expect(abs(MapProjection.aspectRatio(of: [(0, 0), (0.1, 0.2)], within: 0.1...10) - 0.5) < 1e-6)
        #expect(MapProjection.aspectRatio(of: [(0, 0), (1, 0.01)], within: 0.5...1.4) == 1.4)
        #expect(MapProjection.aspectRatio(of: [], within: 0.5...1.4) == 1)
        #expect(MapProjection.aspectRatio(of: [(45, 9)], within: 0.5...1.4) == 1)
        #expect(MapProjection.aspectRatio(of: [(45, 9), (45, 10)], within: 0.5...1.4) == 1)
    }

    @Test func measuresKilometresOnTheGround() {
        // One degree of latitude (111.32 km) spans the 200-unit inner height.
        let projection = MapProjection(coordinates: [(0, 0), (1, 0)], width: 220, height: 220, margin: 10)
        #expect(abs(projection.unitsPerKilometre - 200 / 111.32) < 1e-9)
    }
}
