import Testing
@Test func placeholderOpenAPI() {}
