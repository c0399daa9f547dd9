module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'context-budget',
  rootDir: __dirname,
};
