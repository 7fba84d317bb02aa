enum _BikesPlaceholder {}
