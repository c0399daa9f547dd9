// The one door from this lib's specs to tools/fake-upstream (a test tool with no @ask/* alias yet;
// tsconfig.base.json is shared, so the alias is left to its owner). Production code never imports this.
// eslint-disable-next-line @nx/enforce-module-boundaries
export * from '../../../../tools/fake-upstream/src';
