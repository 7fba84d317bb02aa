import FoundationEssentials

/// Networks compiled into the binary, so `spokes simulate` works with no files around.
///
/// The JSON text is embedded verbatim from `Data/citybikes/` by `Scripts/embed-resources`.
public enum BundledNetworks {
    /// BikeMi, Milano: 318 stations, 4,903 bikes and 4,103 empty slots (a CityBikes
    /// snapshot from 2021-03-04, MIT licence).
    public static var milano: Network {
        get throws(ServiceError) {
            try Service<City>.decode(Data(milanoJSON.utf8), source: "bundled Milano network").network
        }
    }
}
