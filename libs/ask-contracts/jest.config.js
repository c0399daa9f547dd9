module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'ask-contracts',
  rootDir: __dirname,
};
