// Every project's own jest suite, for IDEs; CI runs them through `npm test` (nx run-many -t test).
module.exports = {
  projects: ['<rootDir>/apps/*/jest.config.js', '<rootDir>/libs/*/jest.config.js', '<rootDir>/tools/*/jest.config.js'],
};
