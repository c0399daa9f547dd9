// The one door from this lib's specs to tools/fake-upstream. Production code never imports this.
export * from '@ask/fake-upstream';
