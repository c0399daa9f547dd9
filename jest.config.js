// Every project's own jest suite, for IDEs; CI runs them through `npm test` (nx run-many -t test).
module.exports = { projects: ['<rootDir>/apps/*', '<rootDir>/libs/*', '<rootDir>/tools/*'] };
