enum _ConcurrencyPlaceholder {}
