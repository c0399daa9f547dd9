module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'ask-errors',
  rootDir: __dirname,
};
