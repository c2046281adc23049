"""Each decision node measured alone against labels the benchmark data holds."""
