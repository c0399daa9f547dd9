module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'stack',
  rootDir: __dirname,
};
